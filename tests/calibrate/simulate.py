"""Simulated raters over real grades: what the recovery must-show of issue 15 runs on.

The demo's real captures alone do not vary in every dimension (the faithful and the
starter answers: one pair of score vectors per point, policy and preservation always 1),
so no fit could tell seven weights apart from them. Variants are therefore recombined from
the demo's real stored captures and probe records of each case: every matrix point's view,
every assertion's row and every workflow checkpoint's rows come from the faithful or the
starter attempt at random; a protected check of preservation fails at random; a request to
a third-party host is added to the network log at random. Each variant is graded by the
real grader (:func:`recon.grade.attempt.grade`), and its per-point scores are what the
simulated raters compare.

For the threshold recovery, the desktop default view of a variant may instead be the
faithful one with its DOM snapshot moved right by one of a few offsets (:func:`shifted`;
its pixels kept): where the text of the regions sits is then all that varies in regional
visual, and ``position_tolerance_px`` decides how much an offset costs.

A simulated rater prefers the left capture with probability σ(s · wᵀ(x_left − x_right))
for hidden weights ``w`` over the seven dimensions and sharpness ``s`` (logistic noise);
a random rater picks one of the four choices uniformly.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from recon.calibrate.regrade import Source
from recon.calibrate.scores import Shot, load_manifest, point_scores, used_weights
from recon.grade import global_visual, policy, regional
from recon.grade.attempt import Build, Probed, View
from recon.grade.attempt import grade as grade_attempt
from recon.grade.stored import read_evidence, read_probed, read_views
from recon.model import Judgement
from recon.model.grading import DIMENSIONS
from recon.model.matrix import points
from recon.project.loader import LoadedCase, Project
from recon.project.settings import Settings
from recon.store import Store

PROTOCOL = "demo-native"
THIRD_PARTY = ("https://cdn.tracker.example/pixel.js", "blocked")


@dataclass(frozen=True)
class Sources:
    case: LoadedCase
    first_viewport: str
    builds: dict[str, Build]  # faithful, starter: the attempts' real captures and probes
    reference: Build
    starter: Build  # the case's starter workspace: preservation's "before"
    evidence: dict[str, np.ndarray]


def sources(project: Path, case_id: str) -> Sources:
    store = Store(project / "store")
    cells = {(c.kind, c.name): c for c in load_manifest(project, "demo").cells}
    case = Project.open(project, Settings.from_env()).cases[case_id]
    pts = points(case.contract)

    def out(kind: str, name: str, slot: str) -> str:
        return cells[(kind, name)].outputs[slot].digest

    def build(capture: str, probe: str) -> Build:
        probed = read_probed(
            store, out("probe", probe, "results"), out("probe", probe, "checkpoints")
        )
        return Build(read_views(store, out("capture", capture, "captures"), pts), probed)

    reference = {}
    for pt in pts:
        reference.update(read_views(store, out("oracle", f"{case_id}.{pt.id}", "captures"), [pt]))
    ref_probe = f"{case_id}.reference"
    names = {who: f"{PROTOCOL}.scripted-{who}.{case_id}.0" for who in ("faithful", "starter")}
    return Sources(
        case=case,
        first_viewport=pts[0].viewport.name,
        builds={who: build(name, name) for who, name in names.items()},
        reference=Build(
            reference,
            read_probed(
                store, out("probe", ref_probe, "results"), out("probe", ref_probe, "checkpoints")
            ),
        ),
        starter=build(f"{case_id}.starter", f"{case_id}.starter"),
        evidence=read_evidence(store, out("evidence", case_id, "bundle")),
    )


def _pick(rng: random.Random, options: dict[str, Any]) -> Any:
    return options[rng.choice(sorted(options))]


def desktop_default(build: Build) -> str:
    """The point id of the desktop default view of the first route (the regions' view)."""
    return next(
        p
        for p, v in build.views.items()
        if v.point.viewport.name == "desktop" and v.point.state == "default"
    )


def shifted(view: View, dx: int) -> View:
    """``view`` with every element of its DOM snapshot moved ``dx`` px right, pixels kept."""
    dom = [dict(e, box=[e["box"][0] + dx, *e["box"][1:]]) if "box" in e else e for e in view.dom]
    return replace(view, dom=dom)


def variant(src: Sources, rng: random.Random, moved: Sequence[View] = ()) -> Build:
    """One recombined build (see the module docstring); with ``moved``, its desktop
    default view is one of them."""
    f, s = src.builds["faithful"], src.builds["starter"]
    views = {pid: _pick(rng, {"f": f.views[pid], "s": s.views[pid]}) for pid in f.views}
    if moved:
        views[desktop_default(f)] = rng.choice(list(moved))
    if rng.random() < 0.4:
        pid = rng.choice(sorted(views))
        views[pid] = replace(views[pid], network=[*views[pid].network, THIRD_PARTY])
    own = {a.id: rng.random() < 0.5 for a in src.case.grading.assertions}
    assertions = {
        vp: [row for row in rows if own.get(row["id"], True)]
        + [row for row in s.probed.assertions.get(vp, ()) if not own.get(row["id"], True)]
        for vp, rows in f.probed.assertions.items()
    }
    flows = {k: _pick(rng, {"f": f, "s": s}) for k in f.probed.workflows}
    shots = {k: b.probed.screenshots[k] for k, b in flows.items() if k in b.probed.screenshots}
    kept = [dict(row, passed=row["passed"] and rng.random() > 0.3) for row in f.probed.preservation]
    probed = Probed(
        assertions=assertions,
        preservation=kept,
        workflows={k: b.probed.workflows.get(k, ()) for k, b in flows.items()},
        screenshots=shots,
        failures={},
    )
    return Build(views, probed)


def _by_identity(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` remembered per identity of its arguments: variants share the very arrays and
    DOM lists of the two real attempts, so a metric of the same pair of stills is computed
    once (the metrics are pure; this only saves time)."""
    seen: dict[tuple[int, ...], Any] = {}

    def call(*args: Any, **kwargs: Any) -> Any:
        key = tuple(id(a) for a in args if not isinstance(a, dict | int))
        key += tuple(id(v) for _, v in sorted(kwargs.items()))
        if key not in seen:
            seen[key] = fn(*args, **kwargs)
        return seen[key]

    return call


def _regional_by_identity(fn: Callable[..., Any]) -> Callable[..., Any]:
    """:func:`regional.score` remembered per identity of the stills' pixels and DOM lists
    and the thresholds' values (the stills mappings are built anew on every call). The
    keyed objects are kept alive with the result, so an id is never reused meanwhile."""
    seen: dict[tuple[Any, ...], tuple[Any, list[Any]]] = {}

    def call(regions: Any, candidate: Any, reference: Any, thresholds: Any) -> Any:
        held = [regions]
        parts: list[Any] = [id(regions), tuple(thresholds.model_dump().items())]
        for stills in (candidate, reference):
            for name, still in sorted(stills.items()):
                held += [still.image, still.dom]
                parts.append((name, id(still.image), id(still.dom)))
        key = tuple(parts)
        if key not in seen:
            seen[key] = (fn(regions, candidate, reference, thresholds), held)
        return seen[key][0]

    return call


@contextmanager
def remembered() -> Iterator[None]:
    saved = global_visual.score, policy.evidence_rows, regional.score
    global_visual.score = _by_identity(saved[0])  # type: ignore[assignment]
    policy.evidence_rows = _by_identity(saved[1])  # type: ignore[assignment]
    regional.score = _regional_by_identity(saved[2])  # type: ignore[assignment]
    try:
        yield
    finally:
        global_visual.score, policy.evidence_rows, regional.score = saved  # type: ignore[assignment]


def graded_variants(src: Sources, count: int, seed: int) -> list[Shot]:
    """``count`` variants of the case, graded; one :class:`Shot` per captured point."""
    with remembered():
        return _graded(src, count, seed)[0]


def graded_sources(
    src: Sources, count: int, seed: int, moved: Sequence[View] = ()
) -> tuple[list[Shot], dict[str, Source]]:
    """:func:`graded_variants`, and each variant's grader inputs by attempt name (what a
    :class:`~recon.calibrate.regrade.Regrader` re-scores); call it inside
    :func:`remembered` and re-score there too."""
    return _graded(src, count, seed, moved)


def _graded(
    src: Sources, count: int, seed: int, moved: Sequence[View] = ()
) -> tuple[list[Shot], dict[str, Source]]:
    rng = random.Random(seed)
    found, builds = [], {}
    for i in range(count):
        build = variant(src, rng, moved)
        table = grade_attempt(
            src.case.grading,
            build,
            src.reference,
            src.starter,
            first_viewport=src.first_viewport,
            evidence=src.evidence,
            served={},
        )
        attempt = f"{src.case.id}.v{i}"
        visual = table["details"]["global_visual"]
        builds[attempt] = Source(src.case.grading, build, src.reference, src.starter, visual)
        for point, (dims, terms) in point_scores(table).items():
            digest = f"{src.case.id}/{point}/v{i}".encode().hex()[:64].ljust(64, "0")
            weights = used_weights(table)
            found.append(Shot(src.case.id, point, f"v{i}", attempt, digest, dims, terms, weights))
    return found, builds


def hidden_choice(
    left: Shot, right: Shot, weights: np.ndarray, sharpness: float, rng: random.Random
) -> str:
    diff = np.array([left.dimensions[d] - right.dimensions[d] for d in DIMENSIONS])
    p_left = 1.0 / (1.0 + np.exp(-sharpness * float(weights @ diff)))
    return "left" if rng.random() < p_left else "right"


def judgements(
    pairs: list[tuple[Shot, Shot]],
    count: int,
    rater: str,
    rng: random.Random,
    choose: Any,
    repeats: int = 0,
) -> list[Judgement]:
    """``count`` judgements by one rater over random pairs, ``repeats`` of them shown again."""
    shown = [rng.choice(pairs) for _ in range(count - repeats)]
    shown += rng.sample(shown, repeats)
    rows = []
    for n, (a, b) in enumerate(shown):
        left, right = (a, b) if rng.random() < 0.5 else (b, a)
        rows.append(
            Judgement(
                release="demo",
                case=a.case,
                point=a.point,
                left=left.digest,
                right=right.digest,
                choice=choose(left, right, rng),
                rater=rater,
                time=f"2026-12-01T12:{n // 60 % 60:02d}:{n % 60:02d}.{n:06d}Z",
                seed=rng.randrange(2**62),
            )
        )
    return rows
