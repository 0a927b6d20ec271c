"""The threshold search and its artifact, on synthetic held-out losses (fast, pure)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from recon.calibrate.agreement import Agreed
from recon.calibrate.fit import Fitted
from recon.calibrate.regrade import thresholds_of
from recon.calibrate.thresholds import GRID, SWEEPS, Trial, best, candidates, search, ties
from recon.model.calibration import Calibration, FittedThresholds
from recon.model.grading import DIMENSIONS, THRESHOLDS, Grading, Thresholds

N = 400
ONLY_GLOBAL = {**dict.fromkeys(DIMENSIONS, 0.0), "global_visual": 1.0}


def fitted(losses: np.ndarray) -> Fitted:
    return Fitted(np.ones(7), 1e-4, Agreed(0.8, 0.7, 0.9, len(losses)), losses)


def flat(loss: float) -> Fitted:
    return fitted(np.full(N, loss))


OWN = {name: [float(getattr(Thresholds(), name))] * 2 for name in THRESHOLDS}


def test_threshold_names_agree_and_grids_hold_valid_values() -> None:
    assert THRESHOLDS == tuple(Thresholds.model_fields) == tuple(FittedThresholds.model_fields)
    assert tuple(GRID) == THRESHOLDS
    for name, grid in GRID.items():
        assert list(grid) == sorted(set(grid)), name
        assert getattr(Thresholds(), name) in grid, name  # the default is a candidate
        for value in grid:
            Thresholds.model_validate({name: value})  # every candidate is in bounds


def test_thresholds_of_keeps_own_values_and_types() -> None:
    own = Thresholds(text_similarity=0.85)
    got = thresholds_of(own, {"position_tolerance_px": 48.0, "text_similarity": None})
    assert got.position_tolerance_px == 48 and isinstance(got.position_tolerance_px, int)
    assert got.text_similarity == 0.85 and got.region_pass == 0.8
    grading = Grading.model_validate({"weights": ONLY_GLOBAL})
    calibration = FittedThresholds(region_pass=0.6)
    assert calibration.applied(grading.thresholds).region_pass == 0.6
    assert calibration.applied(grading.thresholds).text_similarity == 0.9


def test_search_finds_each_thresholds_minimum_in_a_fixed_number_of_sweeps() -> None:
    target = {"text_similarity": 0.7, "position_tolerance_px": 48, "overflow_tolerance_px": 4}
    seen: list[Mapping[str, float | None]] = []

    def evaluate(setting: Mapping[str, float | None]) -> Fitted:
        seen.append(dict(setting))
        loss = 0.3
        for name, want in target.items():
            value = setting[name]
            got = getattr(Thresholds(), name) if value is None else value
            loss += abs(got - want) / (max(GRID[name]) - min(GRID[name]))
        return flat(loss)

    found = search(evaluate, {}, OWN)
    assert found.setting == {**target, "region_pass": None}  # region_pass: no evidence
    assert found.evaluations == len(seen) == len({tuple(s.values()) for s in seen})
    assert found.fitted.log_loss == pytest.approx(0.3)
    for name in THRESHOLDS:
        assert [t.value for t in found.trials[name]] == candidates(name, None)
    tried = found.trials["region_pass"]
    assert all(t.tied for t in tried)  # every value scores alike: all tied, own kept
    assert SWEEPS == 2 and search(evaluate, {}, OWN).setting == found.setting  # deterministic


def test_ties_go_to_the_value_the_grades_used_then_the_nearest() -> None:
    same = [Trial(v, flat(0.4)) for v in candidates("region_pass", 0.7)]
    assert best(ties(same), 0.7, [0.8, 0.8]).value == 0.7
    assert best(ties(same), None, [0.8, 0.8]).value is None
    without_current = [t for t in same if t.value not in (None, 0.7)]
    assert best(ties(without_current), 0.7, [0.8, 0.8]).value == 0.6  # 0.6 and 0.8 as near
    assert candidates("region_pass", 0.75)[-1] == 0.75  # a calibration's value is a candidate


def test_a_gain_within_one_paired_standard_error_or_the_floor_is_a_tie() -> None:
    rng = np.random.default_rng(3)
    base = rng.uniform(0.1, 0.6, N)
    noise = rng.normal(0.0, 0.05, N)
    noisy = base + noise - noise.mean() - 0.001  # better on average, by far less than 1 SE
    clear = base - 0.02  # better on every judgement
    marked = ties([Trial(None, fitted(base)), Trial(0.6, fitted(noisy))])
    assert [t.tied for t in marked] == [True, True]
    assert best(marked, None, [0.8]).value is None  # no evidence: the current value stays
    marked = ties([Trial(None, fitted(base)), Trial(0.6, fitted(clear))])
    assert [t.tied for t in marked] == [False, True]
    assert best(marked, None, [0.8]).value == 0.6
    slight = base - 0.0005  # better on every judgement, but by less than TIE
    marked = ties([Trial(None, fitted(base)), Trial(0.6, fitted(slight))])
    assert [t.tied for t in marked] == [True, True] and best(marked, None, [0.8]).value is None


def test_a_calibration_applies_its_weights_and_only_the_thresholds_it_gives() -> None:
    grading = Grading.model_validate(
        {"weights": ONLY_GLOBAL, "thresholds": {"position_tolerance_px": 30}}
    )
    data = {
        "id": "c",
        "method": "m",
        "weights": {**dict.fromkeys(DIMENSIONS, 0.0), "global_visual": 0.5, "functional": 0.5},
        "thresholds": {"text_similarity": 0.7},
        "report": {
            "judgements": 0,
            "decisive": 0,
            "ties": 0,
            "both_bad": 0,
            "folds": 5,
            "l2": 0.001,
            "scale": 1.0,
            "dimensions": {},
            "current": {"agreement": 0.5, "low": 0, "high": 1, "judgements": 0},
            "fitted": {"agreement": 0.5, "low": 0, "high": 1, "judgements": 0},
        },
    }
    applied = Calibration.model_validate(data).applied(grading)
    assert applied.weights == data["weights"]
    assert applied.thresholds.text_similarity == 0.7
    assert applied.thresholds.position_tolerance_px == 30  # the case's own
