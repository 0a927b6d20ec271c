"""Functional score: do deterministic browser checks satisfy the functional contract?

``score = Σ weight(passed) / Σ weight`` over the sealed assertions. An assertion with
no probe result fails (the probe never reached it). No assertions, or a zero total
weight, score 1: nothing was asked, so nothing was missed. Each row carries the
assertion's public label (:mod:`recon.model.labels`), shown on the run page with its
pass/fail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recon.grade.result import MetricResult
from recon.model.grading import Assertion
from recon.model.labels import fallback

VERSION = "functional/2"

CheckRow = Mapping[str, Any]
"""A probe result row: ``{id, passed, observed}``."""


@dataclass(frozen=True)
class Functional(MetricResult):
    version: str = VERSION


def passed_by_id(results: Sequence[CheckRow]) -> dict[str, bool]:
    """Probe rows to ``id -> passed``; a repeated id passes only if every row passed."""
    passed: dict[str, bool] = {}
    for row in results:
        ident = str(row["id"])
        passed[ident] = passed.get(ident, True) and bool(row["passed"])
    return passed


def pass_rate(passed: Mapping[str, bool], weights: Mapping[str, float]) -> float:
    """Weighted pass rate; an id with no result fails; no weight at all scores 1."""
    total = sum(weights.values())
    if total <= 0:
        return 1.0
    return sum(w for ident, w in sorted(weights.items()) if passed.get(ident, False)) / total


def score(assertions: Sequence[Assertion], results: Sequence[CheckRow]) -> Functional:
    """The weighted pass rate of ``assertions``, with one row per assertion."""
    passed = passed_by_id(results)
    observed = {str(r["id"]): str(r.get("observed", "")) for r in results}
    rows: list[dict[str, Any]] = [
        {
            "id": a.id,
            "label": a.label or fallback("functional", i),
            "weight": a.weight,
            "passed": passed.get(a.id, False),
            "observed": observed.get(a.id, "no result"),
        }
        for i, a in enumerate(assertions)
    ]
    weights = {a.id: a.weight for a in assertions}
    value = pass_rate(passed, weights)
    terms = {
        "assertions": float(len(rows)),
        "weight_sum": float(sum(weights.values())),
        "weight_passed": float(sum(a.weight for a in assertions if passed.get(a.id, False))),
        "score": value,
    }
    return Functional(score=value, rows=rows, terms=terms)
