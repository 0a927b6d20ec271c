"""The probe cell: the sealed checks run against a build in the browser.

Reads: the build tree (``attempt.build``, or the case's reference or starter as extra
input ``build``), the case's sealed grading (its digest is a parameter) and the probe
plan (route and viewports). Writes: ``results``, a :class:`~recon.model.captures.ProbeResults`
blob (assertions at every contract viewport in the route's default state, preservation
checks at the first viewport, every workflow's checkpoint rows) and ``checkpoints``, a
tree of the checkpoint screenshots (``<workflow>.<checkpoint>.png``).

A job whose page crashed or hung chromium twice (:class:`~recon.errors.PageError`,
:mod:`recon.render.pool`) costs a Candidate's build that job only: each assertion of the
viewport fails, observing the reason; a workflow gets no rows (its checkpoints are not
reached) and the reason as its failure. The cell goes on. A case's own page (reference or
starter) that does so fails the cell.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from recon.errors import HarnessError, PageError
from recon.model import Viewport
from recon.model.captures import CheckRow, ProbeResults
from recon.model.grading import Assertion
from recon.model.viewport import VIEWPORTS
from recon.pipeline.kinds._base import Produced, blob, skipped, tree
from recon.pipeline.kinds._browsers import browser_pool
from recon.render import WorkflowRun, run_checks, run_workflow
from recon.store import put_files, put_tree, tree_reader

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell, Runtime


def probe_extra(rt: Runtime, cell: Cell) -> dict[str, str]:
    """A case's own reference or starter build, probed once per case for comparison."""
    which = cell.params.get("build")
    if which is None:
        return {}
    case = rt.project.cases[cell.params["case"]]
    root = case.reference if which == "reference" else case.starter_build
    return {"build": put_tree(rt.store, root) if root.is_dir() else put_files(rt.store, {})}


def probe(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    build = inputs.get("build") or inputs.get("attempt.build")
    if build is None:
        return skipped(rt.store, "results", "attempt is not valid")
    grading = rt.project.cases[cell.params["case"]].grading
    plan = cell.params["plan"]
    read = tree_reader(rt.store, build)
    owner = None if "attempt.build" in inputs else f"case {cell.params['case']}"
    viewports = [Viewport.model_validate(v) for v in plan["viewports"]]
    protected = {a.id for a in grading.preservation.assertions}
    assertions: dict[str, list[CheckRow]] = {}
    kept: list[CheckRow] = []
    for i, vp in enumerate(viewports):
        checks = list(grading.assertions) + (grading.preservation.assertions if i == 0 else [])
        job = partial(run_checks, read=read, route=plan["route"], viewport=vp,
                      assertions=checks)  # fmt: skip
        try:
            rows = [CheckRow.model_validate(r.row()) for r in browser_pool(rt).run(job)]
        except PageError as exc:
            rows = failed_rows(checks, page_fault(owner, f"checks at {vp.name}", exc))
        assertions[vp.name] = [r for r in rows if r.id not in protected]
        kept += [r for r in rows if r.id in protected]
    workflows: dict[str, list[CheckRow]] = {}
    failures: dict[str, str] = {}
    shots: dict[str, bytes] = {}
    for wf in grading.workflows:
        vp = VIEWPORTS[wf.viewport]
        try:
            pool = browser_pool(rt)
            run = pool.run(partial(run_workflow, read=read, workflow=wf, viewport=vp))
        except PageError as exc:
            run = WorkflowRun(failure=page_fault(owner, f"workflow {wf.id}", exc))
        workflows.update({k: [CheckRow.model_validate(r) for r in v] for k, v in run.rows.items()})
        if run.failure is not None:
            failures[wf.id] = run.failure
        shots.update({f"{k}.png": png for k, png in run.screenshots.items() if png})
    results = ProbeResults(
        assertions=assertions, preservation=kept, workflows=workflows, failures=failures
    )
    outputs = {
        "results": blob(rt.store, results.model_dump(mode="json")),
        "checkpoints": tree(put_files(rt.store, shots)),
    }
    return Produced(outputs)


def page_fault(owner: str | None, job: str, exc: PageError) -> str:
    """The reason a Candidate's job records; a case's own page (``owner``) fails the cell."""
    if owner is not None:
        raise HarnessError(f"{owner}: its page, probing {job}: {exc}") from exc
    return str(exc)


def failed_rows(checks: Sequence[Assertion], reason: str) -> list[CheckRow]:
    """Every check of a job whose page broke the browser: failed, observing why."""
    return [CheckRow(id=a.id, passed=False, observed=reason) for a in checks]
