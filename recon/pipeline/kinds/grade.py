"""The grade cell: the seven dimensions of one attempt (DESIGN §6).

Reads: ``attempt.build`` (the bytes the page was served, for policy), ``capture.captures``,
``probe.results`` and ``probe.checkpoints``; the case's ``oracle.<point>.captures``, its
reference's and starter's probes and the starter's captures; ``evidence.bundle``; the
sealed grading (its digest is a parameter). Writes: ``grade``, the metric table of
:func:`recon.grade.attempt.grade` plus ``checkpoint_shots`` (checkpoint key -> the digest
of the Candidate's screenshot there, which the site shows beside the checkpoint's public
label), or a :class:`~recon.model.captures.Skipped` blob when the attempt has no valid
build. What it reads becomes the grader's values in :mod:`recon.grade.stored`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon.errors import HarnessError
from recon.grade.attempt import grade as grade_attempt
from recon.grade.stored import read_builds, read_evidence, read_served
from recon.model import Calibration, Grading, load_yaml
from recon.model.calibration import path_of as calibration_path
from recon.model.matrix import Point
from recon.pipeline.kinds._base import Produced, blob, skipped
from recon.store import Store, tree_files

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell, Runtime


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
