"""The grade of one attempt: the seven dimensions from its captures and probe records.

A pure function of what the grade cell reads from the store (DESIGN §6):

- ``global_visual``: the mean over every matrix point of :mod:`global_visual` on the
  point's still and DOM snapshot (its content path); a point whose capture failed (route
  missing, page broken) scores 0 there.
- ``regional_visual``: :mod:`regional` on the default state of the first route, per
  region viewport.
- ``functional``: :mod:`functional` on the assertions probed at the contract's first
  viewport.
- ``responsive``: :mod:`responsive`, per contract viewport: that viewport's global
  visual score at the default state of the first route, overflow against the
  reference's, and the assertions probed at that viewport as layout checks, each met
  when its outcome is the reference's there.
- ``workflow``: :mod:`workflow` on the probed checkpoints; a ``compare_oracle``
  checkpoint's screenshot is scored with :mod:`global_visual` (its image path: a
  checkpoint has no DOM snapshot) against the reference's screenshot at the same
  checkpoint.
- ``preservation``: :mod:`preservation`, "before" being the case's starter and "after"
  the attempt: its protected assertions as probed, its protected regions passing when
  their regional score reaches ``thresholds.region_pass``.
- ``policy``: :mod:`policy` on the union of every point's network log, the served bytes,
  the desktop-most default still with its DOM snapshot, every point's DOM snapshot (for
  the ``data:`` images it paints) and the evidence screenshots.

Every dimension is clamped to [0, 1]; ``total = Σ weight × dimension``
(:func:`recon.grade.compose.compose`). The table keeps every dimension's terms and rows and
the weighted arithmetic; it stays in the store (sealed side): the release JSON and the run
pages carry each dimension's value, its public terms and the total, never a weight or a
product (:mod:`recon.release.aggregate`).
"""

from __future__ import annotations

import io
import posixpath
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np
from PIL import Image

from recon.grade import functional, global_visual, policy, preservation, regional, responsive
from recon.grade import workflow as workflow_metric
from recon.grade._dom import Dom
from recon.grade._paints import decode_raster, embedded_rasters
from recon.grade.compose import clamp, compose, mean
from recon.grade.functional import CheckRow, passed_by_id
from recon.grade.regional import Still
from recon.grade.result import MetricResult
from recon.model.contract import DEFAULT_STATE
from recon.model.grading import Grading, VisualWeights
from recon.model.matrix import Point

VERSION = "attempt/1"
REACHED_BY: dict[str, tuple[str, ...]] = {
    "regional_visual": ("text_similarity", "position_tolerance_px"),
    "responsive": ("overflow_tolerance_px",),
    "preservation": ("text_similarity", "position_tolerance_px", "region_pass"),
}
"""Dimension -> the thresholds (``grading.thresholds``) its score reads; no other
dimension reads one. Preservation reads the regional ones through its protected regions'
regional scores."""


@dataclass(frozen=True)
class View:
    """One matrix point of one build, as captured."""

    point: Point
    image: np.ndarray | None  # the full-page still; None when the capture failed
    dom: Dom = ()
    network: Sequence[Sequence[str]] = ()
    failure: str | None = None


@dataclass(frozen=True)
class Probed:
    """A build's probe records: assertions per viewport, preservation checks, checkpoints."""

    assertions: Mapping[str, Sequence[CheckRow]] = field(default_factory=dict)
    preservation: Sequence[CheckRow] = ()
    workflows: Mapping[str, Sequence[CheckRow]] = field(default_factory=dict)
    screenshots: Mapping[str, np.ndarray] = field(default_factory=dict)
    failures: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Build:
    """Everything graded about one build (the attempt's, the starter's or the reference's)."""

    views: Mapping[str, View]
    probed: Probed


def grade(
    grading: Grading,
    candidate: Build,
    reference: Build,
    starter: Build,
    *,
    first_viewport: str,
    evidence: Mapping[str, np.ndarray],
    served: Mapping[str, bytes],
) -> dict[str, Any]:
    """The grade table of ``candidate`` against ``reference``; see the module docstring."""
    visual = _global(candidate.views, reference.views, grading.visual)
    reached = thresholded(grading, candidate, reference, starter, visual["rows"])
    func = functional.score(grading.assertions, candidate.probed.assertions.get(first_viewport, ()))
    flows = workflow_metric.score(
        grading.workflows,
        candidate.probed.workflows,
        _checkpoint_visuals(candidate, reference, grading.visual),
    )
    pol = _policy(grading, candidate, evidence, served)
    results = {
        "global_visual": (visual["score"], visual["terms"], visual["rows"], global_visual.VERSION),
        "regional_visual": _parts(reached["regional_visual"]),
        "functional": _parts(func),
        "responsive": _parts(reached["responsive"]),
        "workflow": _parts(flows),
        "preservation": _parts(reached["preservation"]),
        "policy": _parts(pol),
    }
    dims = {name: clamp(float(r[0]), f"dimension {name}") for name, r in results.items()}
    composed = compose(dims, {str(k): float(v) for k, v in grading.weights.items()})
    return {
        "version": VERSION,
        "dimensions": dims,
        "arithmetic": composed.arithmetic,
        "total": composed.total,
        "versions": {name: r[3] for name, r in results.items()},
        "terms": {name: r[1] for name, r in results.items()},
        "details": {name: r[2] for name, r in results.items()},
        "captures": {
            pid: view.failure for pid, view in sorted(candidate.views.items()) if view.failure
        },
        "probe_failures": dict(sorted(candidate.probed.failures.items())),
    }


def thresholded(
    grading: Grading,
    candidate: Build,
    reference: Build,
    starter: Build,
    visual_rows: Sequence[Mapping[str, Any]],
    dimensions: Collection[str] = tuple(REACHED_BY),
) -> dict[str, MetricResult]:
    """The dimensions ``grading.thresholds`` reach (:data:`REACHED_BY`), as :func:`grade`
    scores them; ``visual_rows`` are global visual's per-point rows, which no threshold
    reaches. Only ``dimensions`` are scored (a calibration re-scores one at a time)."""
    found: dict[str, MetricResult] = {}
    if "responsive" in dimensions:
        views = _responsive(grading, candidate, reference, visual_rows)
        found["responsive"] = responsive.score(views, grading.thresholds)
    if not {"regional_visual", "preservation"} & set(dimensions):
        return found
    region_stills = _stills(reference.views)
    cand_regional = regional.score(
        grading.regions, _stills(candidate.views, region_stills), region_stills, grading.thresholds
    )
    found["regional_visual"] = cand_regional
    if "preservation" in dimensions:
        start_regional = regional.score(
            grading.regions,
            _stills(starter.views, region_stills),
            region_stills,
            grading.thresholds,
        )
        found["preservation"] = preservation.score(
            grading.preservation,
            grading.regions,
            _protected(starter, start_regional, grading),
            _protected(candidate, cand_regional, grading),
        )
    return {name: found[name] for name in dimensions}


def _parts(result: MetricResult) -> tuple[float, dict[str, float], list[dict[str, Any]], str]:
    return float(result.score), dict(result.terms), list(result.rows), str(result.version)


def _global(
    cand: Mapping[str, View], ref: Mapping[str, View], weights: VisualWeights | None = None
) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    for pid, want in sorted(ref.items()):
        got = cand.get(pid)
        row: dict[str, Any] = {"point": pid}
        if want.image is None:
            row |= {"score": 0.0, "failure": f"reference capture failed: {want.failure}"}
        elif got is None or got.image is None:
            row |= {"score": 0.0, "failure": got.failure if got else "not captured"}
        else:
            result = global_visual.score(
                got.image, want.image, candidate_dom=got.dom, reference_dom=want.dom,
                weights=weights,
            )  # fmt: skip
            row |= {"score": result.score, "terms": result.terms}
        rows.append(row)
    value = mean([r["score"] for r in rows])
    terms = {"points": float(len(rows)), "failed": float(sum("failure" in r for r in rows))}
    return {"score": value, "terms": terms | {"score": value}, "rows": rows}


def _defaults(views: Mapping[str, View]) -> dict[str, View]:
    """Viewport name -> the default-state view of the first route captured there.

    ``views`` are in matrix order (the contract's routes in order), so the first route is
    the contract's first, not the alphabetically first point id (``about.html`` < ``root``).
    """
    found: dict[str, View] = {}
    for view in views.values():
        name = view.point.viewport.name
        if view.point.state == DEFAULT_STATE and name not in found:
            found[name] = view
    return found


def _blank(view: View) -> np.ndarray:
    vp = view.point.viewport
    return np.full((max(1, vp.height), max(1, vp.width), 3), 255, dtype=np.uint8)


def _stills(views: Mapping[str, View], like: Mapping[str, Still] | None = None) -> dict[str, Still]:
    """Default stills per viewport; a failed capture is a white viewport with no DOM."""
    stills: dict[str, Still] = {}
    for name, view in _defaults(views).items():
        image = view.image if view.image is not None else _blank(view)
        stills[name] = Still(image=image, dom=view.dom if view.image is not None else ())
    for name, ref in (like or {}).items():  # a viewport the build never rendered
        stills.setdefault(name, Still(image=np.full_like(ref.image[:1], 255), dom=()))
    return stills


def _responsive(
    grading: Grading, cand: Build, ref: Build, visual_rows: Sequence[Mapping[str, Any]]
) -> list[responsive.ViewportResult]:
    by_point = {row["point"]: row["score"] for row in visual_rows}
    cand_defaults = _defaults(cand.views)
    weights = {a.id: a.weight for a in grading.assertions}
    results = []
    for name, want in sorted(_defaults(ref.views).items()):
        got = cand_defaults.get(name)
        rows = cand.probed.assertions.get(name, ())
        results.append(
            responsive.ViewportResult(
                name=name,
                width=want.point.viewport.width,
                visual=by_point.get(want.point.id, 0.0),
                dom=got.dom if got is not None and got.image is not None else (),
                layout_passed=passed_by_id(rows),
                layout_weights=weights,
                reference_dom=want.dom,
                reference_passed=passed_by_id(ref.probed.assertions.get(name, ())),
            )
        )
    return results


def _checkpoint_visuals(
    cand: Build, ref: Build, weights: VisualWeights | None = None
) -> dict[str, float]:
    """Checkpoint screenshots have no DOM snapshot: global visual's image path."""
    scores: dict[str, float] = {}
    for key, want in sorted(ref.probed.screenshots.items()):
        got = cand.probed.screenshots.get(key)
        scores[key] = 0.0 if got is None else global_visual.score(got, want, weights=weights).score
    return scores


def _protected(build: Build, regions: regional.Regional, grading: Grading) -> dict[str, bool]:
    passed = passed_by_id(build.probed.preservation)
    region_ok = preservation.region_passes(regions, grading.thresholds.region_pass)
    return passed | {rid: region_ok.get(rid, False) for rid in grading.preservation.regions}


def _policy(
    grading: Grading,
    cand: Build,
    evidence: Mapping[str, np.ndarray],
    served: Mapping[str, bytes],
) -> policy.PolicyScore:
    network: list[list[str]] = []
    seen: set[tuple[str, str]] = set()
    for _pid, view in sorted(cand.views.items()):
        for url, outcome in view.network:
            if (url, outcome) not in seen:
                seen.add((url, outcome))
                network.append([url, outcome])
    defaults = _defaults(cand.views)
    widest = max(
        defaults.values(),
        key=lambda v: (v.point.viewport.width, v.point.viewport.name),
        default=None,
    )
    render = widest.image if widest is not None else None
    dom = widest.dom if widest is not None and widest.image is not None else ()
    return policy.score(
        grading.policy,
        network,
        dom=dom,
        asset_sizes={url: len(body) for url, body in served.items()},
        images=served_images(served),
        render=render,
        evidence=evidence,
        snapshots=[view.dom for _pid, view in sorted(cand.views.items())],
    )


def served_images(served: Mapping[str, bytes]) -> dict[str, np.ndarray]:
    """Served raster images as RGB arrays, and the rasters a served SVG embeds as
    ``data:`` URLs (``<url>#<n>``); what is not a decodable raster is skipped."""
    images: dict[str, np.ndarray] = {}
    for url, body in sorted(served.items()):
        name = posixpath.basename(unquote(urlsplit(url).path)).lower()
        if name.endswith(".svg"):
            images |= {f"{url}#{n}": img for n, img in enumerate(embedded_rasters(body))}
        if not name.endswith((".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp")):
            continue
        img = decode_raster(body)
        if img is not None:
            images[url] = img
    return images


def decode_png(data: bytes) -> np.ndarray | None:
    """A PNG as an RGB array, or None for an empty/undecodable one, or one larger than
    Pillow's decompression-bomb bound (twice ``Image.MAX_IMAGE_PIXELS``; the renderer's
    stills are far smaller, recon.render.stills)."""
    if not data:
        return None
    try:
        with Image.open(io.BytesIO(data)) as img:
            return np.asarray(img.convert("RGB"))
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
