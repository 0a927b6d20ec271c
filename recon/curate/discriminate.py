"""The rendered half of ``recon validate``: the reference, its evidence and the starter.

- the reference is the fixed point of its grade (:func:`recon.curate.casecheck.problems`:
  states, regions, assertions at every viewport, workflows);
- ``public/evidence/`` is what the reference renders now (every file the evidence command
  would write, byte for byte; rendering is deterministic);
- a check marked ``discriminates: true`` fails on the starter: an assertion at one contract
  viewport at least, a workflow at one checkpoint at least or by a failing step. One that
  passes on the starter too is reported: it does not tell a solution from the starter;
- no preservation assertion fails on the starter, and no preservation region scores below
  ``thresholds.region_pass`` on the starter (its regional score against the reference, as
  the grader computes it): preservation scores only what passed before the change, so such
  a check silently scores nothing.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from recon.errors import ConfigError
from recon.model.base import shown
from recon.model.viewport import VIEWPORTS, Viewport
from recon.project.loader import LoadedCase

if TYPE_CHECKING:  # playwright loads only when cases are rendered
    from playwright.sync_api import Browser

    from recon.grade.regional import Still
    from recon.render import Reader

FIX_DISCRIMINATE = "make the check test what the task changes, or drop `discriminates: true`"


def rendered_problems(case: LoadedCase, starter: Path) -> list[str]:
    """Problems seen by rendering the reference and the starter's build ``starter``."""
    from recon.curate.casecheck import problems
    from recon.curate.freeze import folder_reader
    from recon.render import open_browser

    found = problems(case)
    found += evidence_drift(case)
    read = folder_reader(starter)
    with open_browser() as browser:
        found += discrimination(browser, read, case)
        found += preservation_on_starter(browser, read, case)
        found += preservation_regions_on_starter(browser, read, case)
    return found


def evidence_drift(case: LoadedCase) -> list[str]:
    """Committed evidence files that differ from what the reference renders now."""
    from recon.curate.freeze import EVIDENCE, render_evidence
    from recon.errors import ConfigError

    committed = case.public / EVIDENCE
    fix = f"run `recon case evidence {case.id}`"
    with tempfile.TemporaryDirectory(prefix="recon-evidence-") as tmp:
        try:
            written = render_evidence(case.reference, Path(tmp), case.contract)
        except ConfigError as err:  # named as the case's own contract, not the scratch copy
            return str(err).replace(shown(Path(tmp)), shown(case.public)).splitlines()
        fresh = Path(tmp) / EVIDENCE
        found = []
        for path in written:
            rel = path.relative_to(fresh)
            mine = committed / rel
            if not mine.is_file():
                found.append(f"{shown(mine)}: missing (the contract declares it); {fix}")
            elif mine.read_bytes() != path.read_bytes():
                found.append(f"{shown(mine)}: differs from the reference rendered now; {fix}")
    return found


def _viewport(name: str) -> Viewport:
    return VIEWPORTS[name]


def discrimination(browser: Browser, read: Reader, case: LoadedCase) -> list[str]:
    """Checks marked ``discriminates: true`` that pass on the starter."""
    from recon.render import run_checks, run_workflow

    where = shown(case.grading_file)
    route = case.contract.routes[0]
    marked = [a for a in case.grading.assertions if a.discriminates]
    failed_somewhere = {a.id: False for a in marked}
    for vp in case.contract.viewports if marked else []:
        results = run_checks(browser, read, route, _viewport(vp.name), marked)
        for result in results:
            failed_somewhere[result.id] |= not result.passed
    found = [
        f"{where}: assertions ({ident}): marked `discriminates: true` but passes on the "
        f"starter too (at every viewport); {FIX_DISCRIMINATE}"
        for ident, failed in failed_somewhere.items()
        if not failed
    ]
    for i, wf in enumerate(case.grading.workflows):
        if not wf.discriminates:
            continue
        run = run_workflow(browser, read, wf, _viewport(wf.viewport))
        failed = run.failure is not None or any(
            not r.passed for results in run.results.values() for r in results
        )
        if not failed:
            found.append(
                f"{where}: workflows[{i}] ({wf.id}): marked `discriminates: true` but every "
                f"checkpoint passes on the starter too; {FIX_DISCRIMINATE}"
            )
    return found


def preservation_on_starter(browser: Browser, read: Reader, case: LoadedCase) -> list[str]:
    """Preservation assertions the starter already fails (where the probe checks them:
    the first route at the first viewport)."""
    from recon.render import run_checks

    checks = case.grading.preservation.assertions
    if not checks:
        return []
    where = shown(case.grading_file)
    vp = case.contract.viewports[0].name
    results = run_checks(browser, read, case.contract.routes[0], _viewport(vp), checks)
    return [
        f"{where}: preservation.assertions ({r.id}): fails on the starter already at {vp} "
        f"(observed: {r.observed!r}), so preservation never scores it; protect what the "
        "starter does, or move the check to assertions"
        for r in results
        if not r.passed
    ]


def preservation_regions_on_starter(browser: Browser, read: Reader, case: LoadedCase) -> list[str]:
    """Preservation regions the starter already fails: the grader's regional score of the
    starter's first route (default state) against the reference's, below ``region_pass``."""
    from recon.curate.freeze import folder_reader
    from recon.grade.preservation import region_passes
    from recon.grade.regional import score

    protected = [r for r in case.grading.regions if r.id in case.grading.preservation.regions]
    if not protected:
        return []
    names = sorted({r.viewport for r in protected})
    reference = _stills(browser, folder_reader(case.reference), case.contract.routes[0], names)
    starter = _stills(browser, read, case.contract.routes[0], names)
    try:
        regional = score(protected, starter, reference, case.grading.thresholds)
    except ConfigError:  # a selector that resolves to nothing: the reference's check says so
        return []
    threshold = case.grading.thresholds.region_pass
    combined = {str(r["id"]): float(r["combined"]) for r in regional.rows}
    return [
        f"{shown(case.grading_file)}: preservation.regions ({ident}): fails on the starter "
        f"already (regional {combined[ident]:.3f} < thresholds.region_pass {threshold}), so "
        "preservation never scores it; protect a region the starter renders like the "
        "reference, or drop it from preservation.regions"
        for ident, passed in region_passes(regional, threshold).items()
        if not passed
    ]


def _stills(browser: Browser, read: Reader, route: str, names: list[str]) -> dict[str, Still]:
    """The default state's full-page still and DOM snapshot at each named viewport."""
    from recon.grade.attempt import decode_png
    from recon.grade.regional import Still
    from recon.render.capture import capture

    stills = {}
    for name in names:
        shot = capture(browser, read, route, _viewport(name))
        image = decode_png(shot.full_png)
        if image is None:  # the failure is what the grader would score: a blank page
            image = np.full((_viewport(name).height, _viewport(name).width, 3), 255, np.uint8)
        stills[name] = Still(image=image, dom=shot.dom if shot.full_png else [])
    return stills
