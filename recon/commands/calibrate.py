"""``recon calibrate``: collect blind preferences, ingest a page's export, fit weights."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from recon.calibrate.scores import Shot
from recon.commands.base import Commands
from recon.errors import ConfigError
from recon.model import Calibration, Judgement, PageJudgement, PairKey, load_json, load_yaml
from recon.model.base import shown
from recon.model.calibration import path_of
from recon.project.loader import Project
from recon.project.settings import Settings
from recon.store import Store, digest_bytes, write_atomic

if TYPE_CHECKING:
    from recon.calibrate.measure import Thresholding

HELP = (
    "calibrate the dimension weights from blind pairwise preferences: `collect` writes a "
    "static pair-collection page for a built release, `ingest` turns its export into "
    "preference rows, `fit` measures agreement and fits weights into "
    "releases/calibrations/<id>.yaml (sealed), which a release names as `calibration: <id>`"
)
COLLECT_HELP = (
    "write a blind pair-collection page for a built release: two renders of one matrix "
    "point side by side under its evidence, who built them hidden, sides shuffled; keys "
    "← → ↓ b u; judgements kept in localStorage and exported as JSONL; works from disk. "
    "The sealed pair key is written beside the page folder (DIR/pairs.key.json)"
)
INGEST_HELP = (
    "join a page's exported JSONL with its sealed pair key into preference rows "
    "(release, case, point, capture digests, choice, hashed rater, time, seed)"
)
FIT_HELP = (
    "measure each dimension's, metric term's and the current composite's agreement with "
    "preference rows (bootstrap 95%% intervals), fit non-negative weights by Bradley–Terry "
    "with L2 and 5-fold held-out agreement, fit the thresholds (each over a declared grid, "
    "the judged captures re-scored by the grader from the stored captures and probe "
    "records, the value with the best held-out log-loss kept, a tie within one standard "
    "error keeping the current one; 2 coordinate sweeps; see recon/calibrate/CARD.md), "
    "check raters, and write releases/calibrations/<id>.yaml (keeping the global visual "
    "fit of the calibration the release names); "
    "bad rows: one error naming file and line, exit 2. With --study DIR instead of "
    "preference files: render a study of real reconstructions (pages/<page>/<method>.html, "
    "judgments.jsonl) with the capture path, fit global visual's term weights per path and "
    "then its guard's floors on its consensus pairs (5 folds by page held out, both refitted "
    "per fold) and write them as the calibration's `visual` part"
)


def _open(root: str, release: str) -> tuple[Project, Store, list[Shot]]:
    from recon.calibrate.scores import load_manifest, shots

    project = Project.open(Path(root), Settings.from_env())
    project.validate()
    project.release(release)  # an unknown id is bad input
    store = project.store()
    return project, store, shots(store, load_manifest(project.root, release))


def cmd_collect(args: argparse.Namespace) -> int:
    from recon.calibrate.page import write
    from recon.calibrate.pairs import choose

    project, store, found = _open(args.root, args.release)
    chosen = choose(found, args.pairs, args.seed)
    out = Path(args.out or f"calibration-{args.release}-{args.seed}")
    written = write(out, args.release, chosen, store, project.root / "cases", args.seed)
    repeats = sum(c.repeat_of is not None for c in chosen)
    print(
        f"wrote {written.page}: {written.pairs} pair(s) ({repeats} shown twice) of release "
        f"{args.release}, seed {args.seed}"
    )
    print(f"wrote {written.key}: the sealed pair key; keep it, never publish it with the page")
    return 0


def _write_jsonl(path: Path, rows: list[Judgement]) -> None:
    lines = [json.dumps(r.model_dump(mode="json", exclude_none=True), sort_keys=True) for r in rows]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, ("\n".join(lines) + "\n").encode("utf-8"))


def cmd_ingest(args: argparse.Namespace) -> int:
    from recon.calibrate.ingest import join
    from recon.calibrate.rows import read

    out = Path(args.out)
    if out.exists():
        raise ConfigError(f"--out {out}: exists; choose a new file (rows are never overwritten)")
    key = load_json(PairKey, Path(args.key))
    rows = join(key, read([Path(p) for p in args.exports], PageJudgement), Path(args.key))
    _write_jsonl(out, rows)
    print(f"wrote {out}: {len(rows)} judgement(s) of release {key.release}")
    return 0


def _release_of(rows: list[Judgement], given: str | None) -> str:
    if given is not None:
        return given
    found = sorted({r.release for r in rows})
    if len(found) != 1:
        raise ConfigError(f"the rows name releases {found}; pass --release to fit one of them")
    return found[0]


def cmd_fit(args: argparse.Namespace) -> int:
    from recon.calibrate.measure import calibrate
    from recon.calibrate.report import report
    from recon.calibrate.rows import check, read
    from recon.calibrate.scores import by_digest

    if args.study is not None:
        if args.preferences:
            raise ConfigError(
                "--study fits global visual on a study's own judgements: give no preference "
                "files with it (fit them in a separate run)"
            )
        return _fit_study(args)
    if not args.preferences:
        raise ConfigError("give preference JSONL file(s) to fit, or --study DIR")
    paths = [Path(p) for p in args.preferences]
    read_rows = read(paths, Judgement)
    release = _release_of([r for _, r in read_rows], args.release)
    project, store, found = _open(args.root, release)
    table = by_digest(found)
    rows = check(read_rows, release, table)
    digests = {shown(p): digest_bytes(p.read_bytes()) for p in paths}
    ident = args.id or f"{release}-{digest_bytes(''.join(sorted(digests.values())).encode())[:8]}"
    thresholding = None
    if not args.no_thresholds:
        thresholding = _thresholding(project, store, release, rows, table)
    calibration = calibrate(
        ident, release, rows, table, digests, args.seed, args.min_consistency, thresholding
    )
    named = project.release(release).calibration
    if named is not None:  # keep the global visual fit the release grades with
        kept = load_yaml(Calibration, path_of(project.root, named)).visual
        calibration = calibration.model_copy(update={"visual": kept})
    print(report(calibration, _write(project, calibration)), end="")
    return 0


def _write(project: Project, calibration: Calibration) -> str:
    """Write ``releases/calibrations/<id>.yaml`` atomically; what to print of it."""
    target = path_of(project.root, calibration.id)
    target.parent.mkdir(parents=True, exist_ok=True)
    dumped = calibration.model_dump(mode="json", exclude_none=True)
    text = yaml.safe_dump(dumped, sort_keys=False, allow_unicode=True)
    write_atomic(target, text.encode("utf-8"))
    return f"{shown(target)} (digest {digest_bytes(text.encode())[:12]})"


def _fit_study(args: argparse.Namespace) -> int:
    """``recon calibrate fit --study DIR``: global visual's fit on a study (issue 28)."""
    import sys

    from recon.calibrate.consensus import study_scores
    from recon.calibrate.renders import Cache, browser_shooter, render_all
    from recon.calibrate.report import report
    from recon.calibrate.study import consensus, read_study
    from recon.calibrate.visual import visual_fit
    from recon.model.viewport import VIEWPORTS
    from recon.pipeline.keys import Codes
    from recon.store import StatCache

    project = Project.open(Path(args.root), Settings.from_env())
    root = Path(args.study)
    study = read_study(root)
    viewport = VIEWPORTS["desktop"]
    renderer = Codes(StatCache(project.layout.stat_db)).digest("capture")
    cache = Path(args.cache) if args.cache else project.layout.study_cache

    def progress(page: str, cached: bool) -> None:
        if not cached:
            print(f"rendered {page}", file=sys.stderr, flush=True)

    renders = render_all(
        study.pages, viewport, renderer, Cache(cache), lambda: browser_shooter(viewport), progress
    )
    files = {"judgments.jsonl": digest_bytes((root / "judgments.jsonl").read_bytes())}
    pages = {f"pages/{k}.html": digest_bytes(p.read_bytes()) for k, p in study.pages.items()}
    files["pages"] = digest_bytes(json.dumps(pages, sort_keys=True).encode())
    fitted = visual_fit(
        consensus(study), study_scores(study, renders), files, renderer,
        f"{viewport.width}x{viewport.height}", args.seed,
    )  # fmt: skip
    ident = args.id or f"{root.name}-{digest_bytes(json.dumps(files).encode())[:8]}"
    calibration = Calibration(id=ident, method=fitted.method, visual=fitted)
    print(report(calibration, _write(project, calibration)), end="")
    return 0


def _thresholding(
    project: Project,
    store: Store,
    release: str,
    rows: list[Judgement],
    table: Mapping[tuple[str, str, str], Shot],
) -> Thresholding:
    """The re-grader of the judged captures' attempts (see :mod:`recon.calibrate.sources`)."""
    from recon.calibrate.measure import Thresholding
    from recon.calibrate.regrade import Regrader
    from recon.calibrate.scores import load_manifest
    from recon.calibrate.sources import current_thresholds, judged_sources

    manifest = load_manifest(project.root, release)
    attempts = {table[(r.case, r.point, d)].attempt for r in rows for d in (r.left, r.right)}
    own = {r.case: project.cases[r.case].grading.thresholds for r in rows}
    sources = judged_sources(project, store, manifest, attempts)
    return Thresholding(Regrader(sources), current_thresholds(project, release), own)


def register(commands: Commands) -> None:
    calibrate = commands.group("calibrate", HELP)
    _collect(calibrate.add("collect", cmd_collect, COLLECT_HELP))
    ingest = calibrate.add("ingest", cmd_ingest, INGEST_HELP)
    ingest.add_argument("exports", nargs="+", help="JSONL file(s) exported by the page")
    ingest.add_argument("--key", required=True, help="the page's DIR/pairs.key.json")
    ingest.add_argument("--out", required=True, help="the preference JSONL to write (new file)")
    fit = calibrate.add("fit", cmd_fit, FIT_HELP)
    fit.description = FIT_HELP.replace("%%", "%")
    _fit(fit)


def _collect(collect: argparse.ArgumentParser) -> None:
    collect.add_argument("release", help="a built release id")
    collect.add_argument(
        "--pairs",
        type=int,
        default=60,
        metavar="N",
        help="pairs to show, repeats included (default: 60)",
    )
    collect.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="S",
        help="seed of the pair choice and order (default: 0)",
    )
    collect.add_argument(
        "--out", metavar="DIR", help="a new folder (default: calibration-<release>-<seed>)"
    )


def _fit(fit: argparse.ArgumentParser) -> None:
    from recon.calibrate.raters import MIN_CONSISTENCY

    fit.add_argument("preferences", nargs="*", help="preference JSONL file(s)")
    fit.add_argument(
        "--study",
        metavar="DIR",
        help="fit global visual's term weights and guard floors on a study of real "
        "reconstructions "
        "(pages/<page>/<method>.html, judgments.jsonl) instead",
    )
    fit.add_argument(
        "--cache",
        metavar="DIR",
        help="with --study: where renders are cached (default: <store>/cache/studies)",
    )
    fit.add_argument(
        "--release", help="the release whose captures were judged (default: the rows')"
    )
    fit.add_argument("--id", help="calibration id (default: <release>-<digest of the rows>)")
    fit.add_argument("--seed", type=int, default=0, help="folds and bootstrap seed (default: 0)")
    fit.add_argument(
        "--min-consistency",
        type=float,
        default=MIN_CONSISTENCY,
        metavar="RATE",
        help=f"flag raters below this self-consistency (default: {MIN_CONSISTENCY})",
    )
    fit.add_argument(
        "--no-thresholds",
        action="store_true",
        help="fit the weights only; the calibration then keeps each case's own thresholds",
    )
