"""The grade cell: the seven dimensions of one attempt (DESIGN §6).

Reads: ``attempt.build`` (the bytes the page was served, for policy), ``capture.captures``,
``probe.results`` and ``probe.checkpoints``; the case's ``oracle.<point>.captures``, its
reference's and starter's probes and the starter's captures; ``evidence.bundle``; the
sealed grading (its digest is a parameter). Writes: ``grade``, the metric table of
:func:`recon.grade.attempt.grade` plus ``checkpoint_shots`` (checkpoint key -> the digest
of the Candidate's screenshot there, which the site shows beside the checkpoint's public
label), or a :class:`~recon.model.captures.Skipped` blob when the attempt has no valid
build.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

import numpy as np

from recon.errors import HarnessError
from recon.grade.attempt import Build, Probed, View, decode_png
from recon.grade.attempt import grade as grade_attempt
from recon.model import Calibration, Grading, load_yaml
from recon.model.calibration import path_of as calibration_path
from recon.model.captures import PointCapture, PointFiles, ProbeResults
from recon.pipeline.kinds._base import Produced, blob, skipped
from recon.project.matrix import Point
from recon.store import Store, tree_files

if TYPE_CHECKING:
    from recon.pipeline.cells import Cell, Runtime


def grade(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    build = inputs.get("attempt.build")
    if build is None:
        return skipped(rt.store, "grade", "attempt is not valid")
    store = rt.store
    loaded = rt.project.cases[cell.params["case"]]
    pts = [Point.from_params(raw) for raw in cell.params["points"]]
    table = grade_attempt(
        calibrated(rt, loaded.grading, cell.params.get("calibration")),
        *read_builds(store, inputs, pts),
        first_viewport=pts[0].viewport.name,
        evidence=read_evidence(store, inputs["evidence.bundle"]),
        served=read_served(store, build, inputs["capture.captures"]),
    )
    table["checkpoint_shots"] = shot_digests(store, inputs["probe.checkpoints"])
    return Produced({"grade": blob(store, table)})


def read_builds(
    store: Store, inputs: dict[str, str], pts: list[Point]
) -> tuple[Build, Build, Build]:
    """The attempt's, the reference's and the starter's builds, as a grade cell with these
    ``inputs`` (its action record's) reads them."""

    def probed(dep: str) -> Probed:
        return read_probed(store, inputs[f"{dep}.results"], inputs[f"{dep}.checkpoints"])

    reference_views: dict[str, View] = {}
    for pt in pts:
        reference_views.update(read_views(store, inputs[f"oracle.{pt.id}.captures"], [pt]))
    return (
        Build(read_views(store, inputs["capture.captures"], pts), probed("probe")),
        Build(reference_views, probed("reference-probe")),
        Build(read_views(store, inputs["starter-capture.captures"], pts), probed("starter-probe")),
    )


def calibrated(rt: Runtime, grading: Grading, calibration: dict[str, str] | None) -> Grading:
    """The case's sealed grading with the release's calibration's weights and thresholds."""
    if calibration is None:
        return grading
    path = calibration_path(rt.project.root, calibration["id"])
    if rt.stat.digest(path) != calibration["digest"]:
        raise HarnessError(f"{path}: changed since the build was planned; run the build again")
    return load_yaml(Calibration, path).applied(grading)


def shot_digests(store: Store, checkpoints: str) -> dict[str, str]:
    """Checkpoint key (``wf/cp``) -> the digest of the build's screenshot there."""
    return {
        path.removesuffix(".png"): f.digest
        for path, f in sorted(tree_files(store, checkpoints).items())
        if path.endswith(".png")
    }


def read_views(store: Store, captures: str, points: list[Point]) -> dict[str, View]:
    """The capture set's points as the grader's views; a missing point is a failed one."""
    files = tree_files(store, captures)

    def read(pid: str, name: str) -> bytes:
        ref = files.get(PointFiles.path(pid, name))
        return store.read_bytes(ref.digest) if ref is not None else b""

    def still(pid: str) -> np.ndarray | None:
        ref = files.get(PointFiles.path(pid, PointFiles.FULL))
        return decoded(store, ref.digest) if ref is not None else None

    views = {}
    for pt in points:
        raw = read(pt.id, PointFiles.RECORD)
        record = PointCapture.model_validate_json(raw) if raw else None
        image = still(pt.id)
        failure = record.failure if record is not None else "not captured"
        failure = failure or (None if image is not None else "no screenshot")
        views[pt.id] = View(
            point=pt.id,
            route=pt.route,
            viewport=pt.viewport.name,
            width=pt.viewport.width,
            height=pt.viewport.height,
            state=pt.state,
            image=None if failure else image,
            dom=json.loads(read(pt.id, PointFiles.DOM) or b"[]"),
            network=[(n.url, n.outcome) for n in (record.network if record else [])],
            failure=failure,
        )
    return views


def read_probed(store: Store, results: str, checkpoints: str) -> Probed:
    raw = ProbeResults.model_validate(store.read_json(results)).rows()
    shots = {}
    for path, f in tree_files(store, checkpoints).items():
        image = decoded(store, f.digest)
        if image is not None:
            shots[path.removesuffix(".png")] = image
    return Probed(
        assertions=raw["assertions"],
        preservation=raw["preservation"],
        workflows=raw["workflows"],
        screenshots=shots,
        failures=raw["failures"],
    )


def read_served(store: Store, build: str, captures: str) -> dict[str, bytes]:
    """The bytes the page was served, by URL (from the capture set's network rows)."""
    files = tree_files(store, build)
    served: dict[str, bytes] = {}
    for path, ref in sorted(tree_files(store, captures).items()):
        if not path.endswith(f"/{PointFiles.RECORD}"):
            continue
        for row in PointCapture.model_validate_json(store.read_bytes(ref.digest)).network:
            found = files.get(row.path) if row.path else None
            if row.outcome == "served" and found is not None and row.url not in served:
                served[row.url] = store.read_bytes(found.digest)
    return served


def read_evidence(store: Store, bundle: str) -> dict[str, np.ndarray]:
    """The evidence bundle's stills (``evidence/<name>.png``), decoded."""
    found = {}
    for path, f in tree_files(store, bundle).items():
        parts = path.split("/")
        if len(parts) == 2 and parts[0] == "evidence" and parts[1].endswith(".png"):
            image = decoded(store, f.digest)
            if image is not None:
                found[parts[1]] = image
    return found


DECODED_BYTES = 256 * 1024 * 1024
"""How much decoded image one process keeps: every grade cell of a case reads the same
reference, starter and evidence stills, and decoding them was a tenth of a grading build."""

_decoded: OrderedDict[str, np.ndarray | None] = OrderedDict()
_decoded_lock = threading.Lock()


def decoded(store: Store, digest: str) -> np.ndarray | None:
    """The PNG stored under ``digest``, decoded (:func:`decode_png`), from the process's
    cache when another cell decoded it already. Arrays are read-only, so sharing is safe;
    a digest names its bytes, so it names the image in any store."""
    with _decoded_lock:
        if digest in _decoded:
            _decoded.move_to_end(digest)
            return _decoded[digest]
    image = decode_png(store.read_bytes(digest))
    if image is not None and image.flags.writeable:
        image.flags.writeable = False
    with _decoded_lock:
        _decoded[digest] = image
        held = sum(i.nbytes for i in _decoded.values() if i is not None)
        while held > DECODED_BYTES and len(_decoded) > 1:
            _, old = _decoded.popitem(last=False)
            held -= old.nbytes if old is not None else 0
    return image
