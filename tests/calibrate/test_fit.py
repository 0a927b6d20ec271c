"""The fit and the agreement measures, on synthetic score differences (fast, pure)."""

from __future__ import annotations

import numpy as np
import pytest

from recon.calibrate.agreement import agreement, points
from recon.calibrate.fit import fit, solve
from recon.errors import ConfigError


def test_points_count_half_for_a_metric_tie_and_skip_human_ties() -> None:
    diff = np.array([0.2, -0.1, 0.0, 0.3])
    outcome = np.array([1.0, 1.0, -1.0, 0.0])
    assert list(points(diff[:3], outcome[:3])) == [1.0, 0.0, 0.5]
    agreed = agreement(diff, outcome)
    assert agreed.judgements == 3 and agreed.agreement == pytest.approx(0.5)
    assert 0.0 <= agreed.low <= agreed.agreement <= agreed.high <= 1.0


def test_solve_keeps_weights_non_negative_and_finds_the_signal() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, size=(3000, 3))
    truth = np.array([4.0, 0.0, 1.5])
    t = (rng.random(3000) < 1 / (1 + np.exp(-(x @ truth)))).astype(float)
    beta = solve(x, t, 1e-4)
    assert beta[0] == pytest.approx(4.0, rel=0.15) and beta[2] == pytest.approx(1.5, rel=0.2)
    assert beta[1] == pytest.approx(0.0, abs=0.3)
    hurts = (rng.random(3000) < 1 / (1 + np.exp(-(x @ np.array([2.0, -3.0, 1.0]))))).astype(float)
    beta = solve(x, hurts, 1e-4)  # a feature people dislike gets weight 0, never negative
    assert beta[1] == 0.0 and beta[0] > beta[2] > 0


def test_fit_held_out_agreement_and_ties_as_half_wins() -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, size=(1000, 2))
    p = 1 / (1 + np.exp(-(x @ np.array([6.0, 2.0]))))
    t = (rng.random(1000) < p).astype(float)
    t[:100] = 0.5  # ties: half a win each side, out of agreement
    fitted = fit(x, t, seed=0)
    assert fitted.weights() == pytest.approx([0.75, 0.25], abs=0.06)
    assert fitted.held_out.judgements == 900
    assert fitted.held_out.low < fitted.held_out.agreement < fitted.held_out.high
    assert fitted.held_out.agreement > 0.75


def test_no_signal_is_a_clear_error() -> None:
    x = np.zeros((20, 3))
    t = np.array([1.0, 0.0] * 10)
    with pytest.raises(ConfigError, match="no dimension that predicts"):
        fit(x, t).weights()
