"""The fit recovers hidden weights from simulated raters over real grades (issue 15).

Raters with known hidden weights over the seven dimensions and logistic noise judge pairs
of captures of the demo's cases (variants recombined from the demo's real captures and
probe records, graded by the real grader: see ``tests/calibrate/simulate.py``). At 2,000
honest judgements the fitted weights' order matches the hidden one (Spearman ρ ≥ 0.9), the
fitted composite's held-out agreement beats every single dimension's and the uncalibrated
composite's, and a rater answering at random is flagged while the honest ones are not.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from recon.calibrate import by_digest, calibrate
from recon.calibrate.pairs import candidates
from recon.model.grading import DIMENSIONS
from tests.calibrate.simulate import graded_variants, hidden_choice, judgements, sources
from tests.conftest import Build

pytestmark = [pytest.mark.slow, pytest.mark.browser]

HIDDEN = np.array([0.30, 0.06, 0.22, 0.03, 0.17, 0.09, 0.13])
"""Over DIMENSIONS (global_visual, regional_visual, functional, responsive, workflow,
preservation, policy): an order unlike either demo case's sealed weights."""
SHARPNESS = 30.0
VARIANTS = 40  # per case: 12 left responsive and global visual inseparable (card)
HONEST = ("r1111111111111111", "r2222222222222222", "r3333333333333333", "r4444444444444444")
RANDOM = "rdddddddddddddddd"


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def simulate(project: Path, seed: int = 7) -> tuple[list, dict]:  # type: ignore[type-arg]
    shots = []
    for i, case in enumerate(("html5-boilerplate", "todomvc")):
        shots += graded_variants(sources(project, case), VARIANTS, seed + i)
    pairs = candidates(shots)
    rng = random.Random(seed)

    def honest(left, right, r):  # type: ignore[no-untyped-def]
        return hidden_choice(left, right, HIDDEN, SHARPNESS, r)

    def at_random(left, right, r):  # type: ignore[no-untyped-def]
        return r.choice(["left", "right", "tie", "both-bad"])

    rows = [row for rater in HONEST for row in judgements(pairs, 500, rater, rng, honest, 25)]
    rows += judgements(pairs, 150, RANDOM, rng, at_random, 30)
    return rows, by_digest(shots)


def test_fit_recovers_hidden_weights_and_flags_a_random_rater(
    built_demo: tuple[Path, Build],
) -> None:
    rows, table = simulate(built_demo[0])
    assert sum(r.rater in HONEST for r in rows) == 2000
    found = calibrate("sim", "demo", rows, table, {}, seed=0)
    fitted = np.array([found.weights[d] for d in DIMENSIONS])
    rho = spearman(fitted, HIDDEN)
    assert rho >= 0.9, (rho, dict(found.weights))
    report = found.report
    held_out = report.fitted.agreement
    for name, single in report.dimensions.items():
        assert held_out > single.agreement, (name, single, report.fitted)
    assert held_out > report.current.agreement, (report.current, report.fitted)
    flagged = {r.rater for r in report.raters if r.flagged}
    assert flagged == {RANDOM}, report.raters
