"""Responsive score: is the implementation faithful across the declared viewports?

Per viewport ``v``::

    overflow_px = max(0, right_edge(candidate) - width - allowance)
    overflow    = 1 if overflow_px <= overflow_tolerance_px
                  else 0.5 ** ((overflow_px - tolerance) / OVERFLOW_HALF_LIFE_PX)
    layout      = weighted share of the layout assertions whose outcome at v is the
                  reference's outcome at v
    v.combined  = (W_VISUAL*visual + W_OVERFLOW*overflow + W_LAYOUT*layout) / Σ applicable W

``visual`` is given (the global visual score at that viewport). ``right_edge`` is the
largest ``x + w`` of any element in the DOM snapshot; ``allowance`` is the reference's
own overflow at that viewport when its DOM is given (off-canvas menus the reference
also has are not the candidate's fault), else 0. Layout is relative to the reference
too: an assertion the reference fails at ``v`` is met there by failing it as well (a
candidate is never penalised for doing what the reference does); without the
reference's outcomes it is the plain weighted pass rate. A viewport without layout
assertions is combined from visual and overflow only.

Across viewports::

    score = W_MEAN * mean(v.combined) + W_MIN * min(v.combined)

Half the score is the worst viewport, so one broken viewport costs real points: with
four viewports, one at 0 and three at 1 scores 0.375, not 0.75. No viewports score 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recon.grade import _dom
from recon.grade._dom import Dom
from recon.grade.functional import pass_rate
from recon.grade.result import MetricResult
from recon.model.grading import Thresholds

VERSION = "responsive/2"
W_VISUAL, W_OVERFLOW, W_LAYOUT = 0.5, 0.2, 0.3
W_MEAN, W_MIN = 0.5, 0.5
OVERFLOW_HALF_LIFE_PX = 32.0


@dataclass(frozen=True)
class ViewportResult:
    """What the grade cell knows about one viewport of the contract."""

    name: str
    width: int
    visual: float
    dom: Dom
    layout_passed: Mapping[str, bool] = field(default_factory=dict)
    layout_weights: Mapping[str, float] = field(default_factory=dict)
    reference_dom: Dom | None = None
    reference_passed: Mapping[str, bool] | None = None


@dataclass(frozen=True)
class Responsive(MetricResult):
    version: str = VERSION


def overflow_px(dom: Dom, width: int) -> int:
    """How far the right-most element reaches past the viewport width (0 if it does not)."""
    right, _ = _dom.page_extent(dom)
    return max(0, right - width)


def score(viewports: Sequence[ViewportResult], thresholds: Thresholds) -> Responsive:
    rows = [_viewport(v, thresholds) for v in sorted(viewports, key=lambda v: v.name)]
    combined = [r["combined"] for r in rows]
    if not combined:
        return Responsive(score=1.0, rows=[], terms={"viewports": 0.0, "score": 1.0})
    mean, worst = sum(combined) / len(combined), min(combined)
    value = W_MEAN * mean + W_MIN * worst
    terms = {
        "viewports": float(len(rows)),
        "mean": mean,
        "min": worst,
        "w_mean": W_MEAN,
        "w_min": W_MIN,
        "score": value,
    }
    return Responsive(score=value, rows=rows, terms=terms)


def _viewport(v: ViewportResult, th: Thresholds) -> dict[str, Any]:
    allowance = 0 if v.reference_dom is None else overflow_px(v.reference_dom, v.width)
    over = max(0, overflow_px(v.dom, v.width) - allowance)
    excess = max(0, over - th.overflow_tolerance_px)
    overflow = 0.5 ** (excess / OVERFLOW_HALF_LIFE_PX)
    visual = min(1.0, max(0.0, float(v.visual)))
    row: dict[str, Any] = {
        "viewport": v.name,
        "width": v.width,
        "visual": visual,
        "overflow_px": over,
        "overflow_allowance_px": allowance,
        "overflow": overflow,
    }
    parts = [(W_VISUAL, visual), (W_OVERFLOW, overflow)]
    if v.layout_weights:
        row["layout"] = pass_rate(_as_reference(v), v.layout_weights)
        parts.append((W_LAYOUT, row["layout"]))
    row["combined"] = sum(w * x for w, x in parts) / sum(w for w, _ in parts)
    return row


def _as_reference(v: ViewportResult) -> Mapping[str, bool]:
    """Per layout assertion: whether the candidate's outcome is the reference's (a
    reference without an outcome for it is taken to pass it)."""
    if v.reference_passed is None:
        return v.layout_passed
    return {
        ident: v.layout_passed.get(ident, False) == v.reference_passed.get(ident, True)
        for ident in v.layout_weights
    }
