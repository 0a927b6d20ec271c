"""What the judged attempts' grade cells read, loaded back from a built release.

A grade cell's action record (``store/actions``) keeps the digests of everything it read
(its captures, probe records, the oracle's, the reference's and the starter's); the
re-grader (:mod:`recon.calibrate.regrade`) gets them as the grader's values, read and
verified from the store exactly as the grade cell reads them. Nothing is rendered again.
The reference's and the starter's builds are read once per case and shared.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from recon.calibrate.regrade import Source
from recon.calibrate.scores import CALIBRATED
from recon.errors import ConfigError
from recon.grade.attempt import Build
from recon.grade.stored import read_builds, read_probed, read_views
from recon.model import Calibration, CellRecord, Manifest, load_yaml
from recon.model.calibration import path_of
from recon.model.matrix import points
from recon.project.loader import Project
from recon.store import ActionCache, Store

SHARED = ("oracle.", "reference-probe.", "starter-capture.", "starter-probe.")
"""Inputs of a grade cell that every attempt of the case shares."""


def judged_sources(
    project: Project, store: Store, manifest: Manifest, attempts: Collection[str]
) -> dict[str, Source]:
    """Attempt name -> its :class:`Source`, for each of ``attempts`` graded in ``manifest``."""
    cache = ActionCache(project.store_root)
    shared: dict[str, tuple[Build, Build]] = {}
    found: dict[str, Source] = {}
    for cell in manifest.cells:
        attempt = cell.name.split(CALIBRATED)[0]
        if cell.kind != "grade" or attempt not in attempts or attempt in found:
            continue
        raw = cache.get(cell.key)
        if raw is None:
            raise ConfigError(
                f"{cache.root}: no record of grade cell {cell.name} (key {cell.key[:12]}); "
                f"build the release again (`doit release:{manifest.release}`) or fit with "
                "--no-thresholds"
            )
        inputs = CellRecord.model_validate(raw).inputs
        case = project.cases[attempt.split(".")[2]]
        pts = points(case.contract)
        key = repr(sorted((k, v) for k, v in inputs.items() if k.startswith(SHARED)))
        if key in shared:
            probed = read_probed(store, inputs["probe.results"], inputs["probe.checkpoints"])
            candidate = Build(read_views(store, inputs["capture.captures"], pts), probed)
        else:
            candidate, *rest = read_builds(store, inputs, pts)
            shared[key] = (rest[0], rest[1])
        visual = store.read_json(cell.outputs["grade"].digest)["details"]["global_visual"]
        found[attempt] = Source(case.grading, candidate, *shared[key], visual)
    return found


def current_thresholds(project: Project, release: str) -> Mapping[str, float | None]:
    """The thresholds the release's calibration sets (those it leaves out: None)."""
    named = project.release(release).calibration
    if named is None:
        return {}
    given = load_yaml(Calibration, path_of(project.root, named)).thresholds
    return given.model_dump()
