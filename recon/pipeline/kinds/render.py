"""The oracle and capture cells: a build rendered at matrix points, as a capture set.

Reads: the build tree (``oracle``: the case's sealed reference, extra input
``reference``; ``capture``: ``attempt.build``, or the case's starter as extra input
``build``), and the points (parameters). Writes: ``captures``, a capture set
(:mod:`recon.model.captures`): per point, the full-page and first-screen stills, the DOM
snapshot and a :class:`~recon.model.captures.PointCapture`. A capture cell whose attempt
has no valid build stores a :class:`~recon.model.captures.Skipped` blob instead.

A point whose page crashed or hung chromium twice (:class:`~recon.errors.PageError`,
:mod:`recon.render.pool`) costs a Candidate's build that point only: it is recorded as a
failed point (blank stills, no DOM, the reason as its ``failure``) and the cell goes on. A
case's own page (its reference or starter) that does so fails the cell, naming the point.
"""

from __future__ import annotations

import json
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from recon.errors import HarnessError, PageError
from recon.model.captures import NetworkRow, PointCapture, PointFiles, Stability
from recon.model.matrix import Point
from recon.pipeline.kinds._base import Produced, skipped, tree
from recon.pipeline.kinds._browsers import browser_pool
from recon.render import Capture
from recon.render import Stability as Proof
from recon.render.capture import capture as render_capture
from recon.render.serve import build_path
from recon.render.session import blank_png
from recon.store import put_files, put_tree, tree_reader

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell, Runtime


def oracle_extra(rt: Runtime, cell: Cell) -> dict[str, str]:
    return {"reference": put_tree(rt.store, rt.project.cases[cell.params["case"]].reference)}


def oracle(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    """The reference at one point; a reference that never holds still is the case's fault:
    the cell fails, naming the point (``recon curate evidence`` refuses it too)."""
    points = [Point.from_params(cell.params["point"])]
    files, timings = capture_set(
        rt, inputs["reference"], points, owner=f"case {cell.params['case']}"
    )
    record = PointCapture.model_validate_json(
        files[PointFiles.path(points[0].id, PointFiles.RECORD)]
    )
    if record.stability.status == "unstable":
        raise HarnessError(
            f"case {cell.params['case']}: the reference at {record.point} never holds still "
            f"({record.failure}); make it settle, then `recon validate`"
        )
    return Produced({"captures": tree(put_files(rt.store, files))}, timings=timings)


def capture_extra(rt: Runtime, cell: Cell) -> dict[str, str]:
    """A case's starter, rendered for comparison (an empty build when it has no output)."""
    if cell.params.get("build") != "starter":
        return {}
    root = rt.project.cases[cell.params["case"]].starter_build
    return {"build": put_tree(rt.store, root) if root.is_dir() else put_files(rt.store, {})}


def capture(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    build = inputs.get("build") or inputs.get("attempt.build")
    if build is None:
        return skipped(rt.store, "captures", "attempt is not valid")
    points = [Point.from_params(raw) for raw in cell.params["points"]]
    owner = None if "attempt.build" in inputs else f"case {cell.params['case']}"
    files, timings = capture_set(rt, build, points, owner=owner)
    return Produced({"captures": tree(put_files(rt.store, files))}, timings=timings)


def capture_set(
    rt: Runtime, build: str, points: list[Point], *, owner: str | None = None
) -> tuple[dict[str, bytes], dict[str, float]]:
    """Every point of ``points`` rendered from the stored ``build``: the capture set's files.

    ``owner`` names a case whose own page this is: a point it breaks fails the cell. A
    Candidate's (``owner`` None) is recorded as a failed point."""
    read = tree_reader(rt.store, build)
    files: dict[str, bytes] = {}
    timings: dict[str, float] = {}
    for pt in points:
        try:
            job = partial(
                render_capture, read=read, route=pt.route, viewport=pt.viewport, steps=pt.steps
            )
            cap = browser_pool(rt).run(job)
        except PageError as exc:
            if owner is not None:
                raise HarnessError(f"{owner}: its page at {pt.id}: {exc}") from exc
            cap = page_failed(pt, str(exc))
        proof = cap.stability
        status = proof.status if proof.pairs else "unproven"
        unstable = proof.describe() if status == "unstable" else None
        record = PointCapture.of(
            pt,
            failure="; ".join(f for f in (cap.failure, unstable) if f) or None,
            stability=Stability(
                status=status, pairs=proof.pairs, differing_pixels=proof.differing_pixels
            ),
            console=cap.console,
            network=[_row(n.url, n.outcome) for n in cap.network],
        )
        files[PointFiles.path(pt.id, PointFiles.FULL)] = cap.full_png
        files[PointFiles.path(pt.id, PointFiles.VIEWPORT)] = cap.viewport_png
        files[PointFiles.path(pt.id, PointFiles.DOM)] = _json(cap.dom)
        files[PointFiles.path(pt.id, PointFiles.RECORD)] = _json(record.model_dump(mode="json"))
        timings.update({f"{pt.id}.{k}": round(v, 1) for k, v in cap.timings.items()})
    return files, timings


def page_failed(pt: Point, reason: str) -> Capture:
    """The capture of a point whose page broke the browser: blank stills, nothing else
    (what it showed or logged before is not kept: it differs from crash to crash)."""
    blank = blank_png(pt.viewport)
    return Capture(blank, blank, [], [], [], {}, Proof(True, 0), failure=reason)


def _row(url: str, outcome: str) -> NetworkRow:
    path = build_path(urlsplit(url).path) if outcome == "served" else None
    return NetworkRow(url=url, outcome=outcome, path=path)


def _json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, indent=1).encode()
