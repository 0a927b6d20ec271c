"""Workflow score: do interaction sequences reach and preserve the required states?

The probe replays each workflow's steps and, at each checkpoint, evaluates its
assertions; for a ``preserve`` checkpoint it reloads (or navigates to ``navigate_to``)
and evaluates them again. Its result rows are keyed by :func:`key`.

Per workflow, each checkpoint is one unit; a ``preserve`` checkpoint is a second unit::

    reached(c)   = every assertion of c passed (a missing row fails)
    credit(c)    = reached(c) * (oracle visual score of c, 0 if absent, if compare_oracle else 1)
    preserved(c) = reached(c) and every assertion passed again after the reload/navigation
    workflow     = (Σ credit + Σ preserved) / units

In order: once a checkpoint is not reached, it and every later checkpoint earn nothing,
even if later rows say they passed. A lost preservation costs its own unit only; later
checkpoints are judged by their own rows, which already show any state it lost.
The score is the workflow-weight-weighted mean; no workflows score 1. Workflow and
checkpoint rows carry their public labels (:mod:`recon.model.labels`) for the run page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recon.grade.functional import CheckRow, passed_by_id
from recon.grade.result import MetricResult
from recon.model.grading import Checkpoint, Workflow
from recon.model.grading import checkpoint_key as key
from recon.model.labels import fallback

VERSION = "workflow/2"


@dataclass(frozen=True)
class WorkflowScore(MetricResult):
    version: str = VERSION


def score(
    workflows: Sequence[Workflow],
    results: Mapping[str, Sequence[CheckRow]],
    oracle: Mapping[str, float] | None = None,
) -> WorkflowScore:
    """``oracle`` maps ``key(wf, cp)`` to the checkpoint's visual score against the oracle."""
    rows: list[dict[str, Any]] = []
    weighted = weights = 0.0
    for n, wf in enumerate(workflows):
        cp_rows = _checkpoints(wf, results, oracle or {})
        units = sum(r["units"] for r in cp_rows)
        earned = sum(r["credit"] + r["preserved"] for r in cp_rows)
        value = earned / units
        rows.append(
            {
                "id": wf.id,
                "label": wf.label or fallback("workflow", n),
                "weight": wf.weight,
                "units": units,
                "earned": earned,
                "score": value,
                "checkpoints": cp_rows,
            }
        )
        weighted += wf.weight * value
        weights += wf.weight
    value = weighted / weights if weights > 0 else 1.0
    terms = {
        "workflows": float(len(rows)),
        "weight_sum": weights,
        "weighted_sum": weighted,
        "score": value,
    }
    return WorkflowScore(score=value, rows=rows, terms=terms)


def _checkpoints(
    wf: Workflow, results: Mapping[str, Sequence[CheckRow]], oracle: Mapping[str, float]
) -> list[dict[str, Any]]:
    rows = []
    going = True
    for n, cp in enumerate(s for s in wf.steps if isinstance(s, Checkpoint)):
        here = key(wf.id, cp.id)
        reached = going and _all_pass(cp, results.get(here, ()))
        going = reached
        visual = min(1.0, max(0.0, float(oracle.get(here, 0.0)))) if cp.compare_oracle else 1.0
        row: dict[str, Any] = {
            "id": cp.id,
            "label": cp.label or fallback("checkpoint", n),
            "reached": reached,
            "units": 1,
            "credit": visual if reached else 0.0,
            "preserved": 0.0,
        }
        if cp.compare_oracle:
            row["oracle_visual"] = visual
        if cp.preserve is not None:
            kept = reached and _all_pass(cp, results.get(key(wf.id, cp.id, preserved=True), ()))
            row |= {"units": 2, "preserve": cp.preserve, "preserved": 1.0 if kept else 0.0}
        rows.append(row)
    return rows


def _all_pass(cp: Checkpoint, rows: Sequence[CheckRow]) -> bool:
    passed = passed_by_id(rows)
    return all(passed.get(a.id, False) for a in cp.assertions)
