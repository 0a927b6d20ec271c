"""The grader's inputs read back from the store, as a grade cell reads them.

A grade cell (:mod:`recon.pipeline.kinds.grade`) reads the capture sets of its attempt,
the oracle's and the starter's (:class:`~recon.model.captures.PointCapture` per matrix
point), their probe records (:class:`~recon.model.captures.ProbeResults`), the served
build and the evidence stills; the re-grader (:mod:`recon.calibrate.sources`) reads them
back the same way from a built release's action records. Here they become the grader's
values (:class:`~recon.grade.attempt.Build`, :class:`~recon.grade.attempt.View`,
:class:`~recon.grade.attempt.Probed`). The metrics stay pure: this module is the grader's
one reader, and it reads only through the :class:`~recon.store.Store` it is given, every
object verified against its digest.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict

import numpy as np

from recon.grade.attempt import Build, Probed, View, decode_png
from recon.model.captures import PointCapture, PointFiles, ProbeResults
from recon.model.matrix import Point
from recon.store import Store, tree_files


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
            point=pt,
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
