"""Case validation against the rendered reference: what no schema can check.

Every region selector of ``sealed/grading.yaml`` must resolve in the reference's DOM
snapshot at the region's viewport, and every sealed assertion must pass on the
reference itself (the top of every ladder). Problems are caught here, by ``recon
validate``, rather than at grading time; each names the file, the field and the fix.
"""

from __future__ import annotations

from recon.errors import ConfigError
from recon.model.base import shown
from recon.model.contract import VIEWPORTS
from recon.pipeline.project import LoadedCase


def problems(case: LoadedCase) -> list[str]:
    """Each problem as ``<grading file>: <field>: <what>; <fix>``."""
    from recon.curate.freeze import folder_reader
    from recon.grade.regional import resolve_regions
    from recon.render import Viewport, capture, open_browser, run_checks

    grading = case.grading
    where = shown(case.grading_file)
    route = case.contract.routes[0]
    read = folder_reader(case.reference)
    found: list[str] = []
    with open_browser() as browser:
        doms = {}
        for name in sorted({r.viewport for r in grading.regions}):
            if name not in VIEWPORTS:
                known = ", ".join(sorted(VIEWPORTS))
                found.append(f"{where}: regions: unknown viewport {name!r} (known: {known})")
                continue
            vp = VIEWPORTS[name]
            doms[name] = capture(browser, read, route, Viewport(name, vp.width, vp.height)).dom
        resolution = resolve_regions(grading.regions, doms)
        found += [f"{where}: {p}" for p in resolution.problems]
        first = case.contract.viewports[0]
        checks = [*grading.assertions, *grading.preservation.assertions]
        viewport = Viewport(first.name, first.width, first.height)
        for i, result in enumerate(run_checks(browser, read, route, viewport, checks)):
            if not result.passed:
                field = "assertions" if i < len(grading.assertions) else "preservation.assertions"
                found.append(
                    f"{where}: {field} ({result.id}): fails on the reference itself "
                    f"(observed: {result.observed!r}); fix the locator or the expectation"
                )
    return found


def check(cases: list[LoadedCase]) -> None:
    """Raise a ConfigError with the first problem of the first case that has one."""
    for case in cases:
        found = problems(case)
        if found:
            raise ConfigError(found[0])
