"""Unit tests for recon.grade.compose: the weighted total keeps every term."""

from __future__ import annotations

import pytest

from recon.errors import HarnessError
from recon.grade.compose import compose
from recon.model.grading import DIMENSIONS

WEIGHTS = dict(zip(DIMENSIONS, (0.3, 0.15, 0.2, 0.1, 0.1, 0.05, 0.1), strict=True))


def test_total_is_the_sum_of_weight_times_dimension_with_every_term_kept() -> None:
    dims = dict(zip(DIMENSIONS, (0.9, 0.8, 1.0, 0.5, 0.0, 1.0, 1.0), strict=True))
    composed = compose(dims, WEIGHTS)
    assert [r["term"] for r in composed.arithmetic] == sorted(DIMENSIONS)
    assert all(r["product"] == r["weight"] * r["value"] for r in composed.arithmetic)
    assert composed.total == sum(r["product"] for r in composed.arithmetic)
    assert composed.total == pytest.approx(sum(WEIGHTS[d] * dims[d] for d in DIMENSIONS))


def test_all_ones_give_one_and_a_missing_dimension_is_a_harness_error() -> None:
    assert compose(dict.fromkeys(DIMENSIONS, 1.0), WEIGHTS).total == pytest.approx(1.0)
    with pytest.raises(HarnessError, match="no score for weighted dimension"):
        compose({"functional": 1.0}, WEIGHTS)
