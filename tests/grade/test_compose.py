"""Unit tests for recon.grade.compose: the weighted total keeps every term."""

from __future__ import annotations

import math

import pytest

from recon.errors import HarnessError
from recon.grade.compose import clamp, compose
from recon.model.grading import DIMENSIONS

WEIGHTS = dict(zip(DIMENSIONS, (0.3, 0.15, 0.2, 0.1, 0.1, 0.05, 0.1), strict=True))


def test_all_ones_total_exactly_one_whatever_the_order_of_adding_the_weights() -> None:
    # gallery-carousel's weights: added left to right they give 0.9999999999999999
    weights = dict(zip(DIMENSIONS, (0.2, 0.2, 0.15, 0.1, 0.25, 0.0, 0.1), strict=True))
    assert sum(weights[k] for k in sorted(weights)) != 1.0
    assert compose(dict.fromkeys(DIMENSIONS, 1.0), weights).total == 1.0


def test_total_is_the_sum_of_weight_times_dimension_with_every_term_kept() -> None:
    dims = dict(zip(DIMENSIONS, (0.9, 0.8, 1.0, 0.5, 0.0, 1.0, 1.0), strict=True))
    composed = compose(dims, WEIGHTS)
    assert [r["term"] for r in composed.arithmetic] == sorted(DIMENSIONS)
    assert all(r["product"] == r["weight"] * r["value"] for r in composed.arithmetic)
    assert composed.total == math.fsum(r["product"] for r in composed.arithmetic)
    assert composed.total == pytest.approx(sum(WEIGHTS[d] * dims[d] for d in DIMENSIONS))


def test_all_ones_give_one_and_a_missing_dimension_is_a_harness_error() -> None:
    assert compose(dict.fromkeys(DIMENSIONS, 1.0), WEIGHTS).total == pytest.approx(1.0)
    with pytest.raises(HarnessError, match="no score for weighted dimension"):
        compose({"functional": 1.0}, WEIGHTS)


def test_each_dimension_is_clamped_to_zero_one_before_weighting() -> None:
    dims = dict.fromkeys(DIMENSIONS, 1.0) | {"policy": 51.0, "workflow": -3.0}
    composed = compose(dims, WEIGHTS)
    rows = {r["term"]: r for r in composed.arithmetic}
    assert rows["policy"]["value"] == 1.0 and rows["policy"]["measured"] == 51.0
    assert rows["policy"]["product"] == WEIGHTS["policy"]  # never more than its weight
    assert rows["workflow"]["value"] == 0.0 and rows["workflow"]["product"] == 0.0
    assert "measured" not in rows["functional"]
    assert composed.total == pytest.approx(1.0 - WEIGHTS["workflow"])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_score_or_weight_is_a_harness_error_not_a_grade(bad: float) -> None:
    with pytest.raises(HarnessError, match="not a finite number"):
        compose(dict.fromkeys(DIMENSIONS, 1.0) | {"functional": bad}, WEIGHTS)
    with pytest.raises(HarnessError, match="weights are >= 0"):
        compose(dict.fromkeys(DIMENSIONS, 1.0), WEIGHTS | {"functional": bad})
    with pytest.raises(HarnessError, match="weights are >= 0"):
        compose(dict.fromkeys(DIMENSIONS, 1.0), WEIGHTS | {"functional": -0.2})


def test_clamp() -> None:
    assert (clamp(1.5, "x"), clamp(-0.5, "x"), clamp(0.25, "x")) == (1.0, 0.0, 0.25)
