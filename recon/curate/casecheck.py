"""Case validation against the rendered reference: what no schema can check.

The reference is the fixed point of every grade: graded against itself it scores 1.0 on
every dimension at every matrix point. So, on the rendered reference:

- every contract state is reached at every contract viewport (its steps succeed, the
  capture records no failure);
- every region selector resolves in the DOM snapshot at the region's viewport;
- every sealed assertion passes at every contract viewport (preservation assertions at
  the first, where the probe checks them), and every workflow runs to its end with
  every checkpoint passing, after its reload or navigation too;
- an assertion that reads one element and gives no ``match`` matches at most one.

Every deviation is reported, each on its own line naming the file, the field, the
viewport, the observed value and the fix; ``recon validate`` prints them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from recon.errors import ConfigError
from recon.model.base import shown
from recon.model.viewport import VIEWPORTS
from recon.project.loader import LoadedCase

if TYPE_CHECKING:  # playwright loads only when a reference is rendered
    from playwright.sync_api import Browser

    from recon.render import CheckResult, Reader

FIX_CHECK = "fix the locator or the expectation"
FIX_MATCH = "give `match: first|any|all|nth=N` or make the locator unique"


def problems(case: LoadedCase) -> list[str]:
    """Each deviation of the reference as ``<file>: <field>: <what>; <fix>``."""
    from recon.curate.freeze import folder_reader
    from recon.render import open_browser

    read = folder_reader(case.reference)
    with open_browser() as browser:
        found, doms = _states(browser, read, case)
        return [
            *found,
            *_regions(case, doms),
            *_assertions(browser, read, case),
            *_workflows(browser, read, case),
        ]


def check(cases: Sequence[LoadedCase]) -> None:
    """Raise one ConfigError listing every problem of every case (one per line)."""
    found = [p for case in cases for p in problems(case)]
    if found:
        raise ConfigError("\n".join(found))


def _states(
    browser: Browser, read: Reader, case: LoadedCase
) -> tuple[list[str], dict[str, list[dict[str, Any]]]]:
    """Every route at every viewport and every state at each of its viewports: the
    problems, and the DOM snapshot of the first route's default state per viewport (where
    regions resolve)."""
    from recon.render.capture import capture

    where = shown(case.public / "contract.yaml")
    found: list[str] = []
    doms: dict[str, list[dict[str, Any]]] = {}
    for vp in case.contract.viewports:
        for route in case.contract.routes:
            shot = capture(browser, read, route, vp)
            doms.setdefault(vp.name, shot.dom)
            if shot.failure:
                found.append(f"{where}: routes ({route}) at {vp.name}: {shot.failure}")
        for i, state in enumerate(case.contract.states):
            if not state.applies(vp):
                continue
            shot = capture(browser, read, state.route, vp, steps=state.steps)
            if shot.failure:
                found.append(
                    f"{where}: states[{i}] ({state.name}) at {vp.name}: the reference fails: "
                    f"{shot.failure}; fix the steps"
                )
    return found, doms


def _regions(case: LoadedCase, doms: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Region selectors resolved on the reference's snapshots (a region's viewport is one
    of the contract's: the model checks that when the case is loaded)."""
    from recon.grade.regional import resolve_regions

    resolution = resolve_regions(case.grading.regions, doms)
    return [f"{shown(case.grading_file)}: {p}" for p in resolution.problems]


def _assertions(browser: Browser, read: Reader, case: LoadedCase) -> list[str]:
    from recon.render import run_checks

    grading = case.grading
    route = case.contract.routes[0]
    outcomes: dict[tuple[str, str], list[tuple[str, CheckResult]]] = {}
    for i, vp in enumerate(case.contract.viewports):
        fields = [("assertions", grading.assertions)]
        if i == 0:
            fields.append(("preservation.assertions", grading.preservation.assertions))
        for field, checks in fields:
            results = run_checks(browser, read, route, vp, checks)
            for a, result in zip(checks, results, strict=True):
                outcomes.setdefault((field, a.id), []).append((vp.name, result))
    found = []
    for (field, ident), seen in outcomes.items():
        found += _deviations(shown(case.grading_file), f"{field} ({ident})", seen)
    return found


def _workflows(browser: Browser, read: Reader, case: LoadedCase) -> list[str]:
    from recon.render import run_workflow

    where = shown(case.grading_file)
    found = []
    for i, wf in enumerate(case.grading.workflows):
        field = f"workflows[{i}] ({wf.id})"
        run = run_workflow(browser, read, wf, VIEWPORTS[wf.viewport])
        for key, results in run.results.items():
            checkpoint = key.split("/", 1)[1]
            for result in results:
                seen = [(wf.viewport, result)]
                found += _deviations(where, f"{field} {checkpoint} ({result.id})", seen)
        if run.failure is not None:
            found.append(f"{where}: {field}: {run.failure} on the reference; fix the steps")
    return found


def _deviations(where: str, field: str, seen: list[tuple[str, CheckResult]]) -> list[str]:
    """One line per distinct failure (with the viewports showing it), and one for an
    ambiguous locator."""
    failing: dict[str, list[str]] = {}
    for viewport, result in seen:
        if not result.passed:
            failing.setdefault(result.observed, []).append(viewport)
    lines = [
        f"{where}: {field} at {', '.join(vps)}: fails on the reference itself "
        f"(observed: {observed!r}); {FIX_CHECK}"
        for observed, vps in failing.items()
    ]
    ambiguous = next(((vp, r) for vp, r in seen if r.ambiguous), None)
    if ambiguous is not None:
        viewport, result = ambiguous
        lines.append(
            f"{where}: {field}: the locator matches {result.matches} elements on the "
            f"reference at {viewport} ({'; '.join(result.ambiguous)}); {FIX_MATCH}"
        )
    return lines
