"""The fit recovers a hidden threshold from simulated raters over real grades (issue 15).

Variants are recombined from the demo's real stored captures and probe records as in
``test_recovery.py``, except that each variant's desktop default view is the faithful one
with its DOM snapshot moved right by one of ``SHIFTS`` px (``simulate.shifted``): where
the regions' text sits is what varies in regional visual. The raters' hidden utility
scores regional visual at ``position_tolerance_px`` = 96 (a grid value; the cases' own is
24): an offset up to 96 px costs them nothing. The fit must choose 96 and its held-out
agreement there must beat the cases' own value's. The re-grader is checked against the
grader: at the cases' own thresholds it reproduces every graded score, and a threshold
moves only the dimensions it reaches (``REACHED_BY``), as the full grader scores them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from recon.calibrate import by_digest, calibrate
from recon.calibrate.measure import Thresholding
from recon.calibrate.pairs import candidates
from recon.calibrate.regrade import Regrader, Source
from recon.calibrate.scores import Shot
from recon.calibrate.thresholds import GRID
from recon.grade.attempt import REACHED_BY
from recon.grade.attempt import grade as grade_attempt
from recon.model.grading import DIMENSIONS, THRESHOLDS, Thresholds
from tests.calibrate.simulate import (
    desktop_default,
    graded_sources,
    hidden_choice,
    judgements,
    remembered,
    shifted,
    sources,
)
from tests.conftest import Build

pytestmark = [pytest.mark.slow, pytest.mark.browser]

HIDDEN = np.array([0.15, 0.45, 0.10, 0.05, 0.10, 0.05, 0.10])
"""Over DIMENSIONS: regional visual weighs most, so where its text sits matters."""
HIDDEN_SETTING = {"position_tolerance_px": 96}
SHIFTS = (0, 16, 32, 48, 64, 96, 128, 192)
SHARPNESS = 30.0
VARIANTS = 40  # per case
SEED = 11
RATERS = ("r1111111111111111", "r2222222222222222", "r3333333333333333", "r4444444444444444")


@dataclass(frozen=True)
class Simulated:
    shots: list[Shot]
    sources: dict[str, Source]
    own: dict[str, Thresholds]


@pytest.fixture(scope="module")
def simulated(built_demo: tuple[Path, Build]) -> Iterator[Simulated]:
    """The variants, graded; the module's tests run inside :func:`remembered` (its memo
    of the pure metrics is what keeps re-scoring 80 variants at 40 settings quick)."""
    with remembered():
        shots: list[Shot] = []
        found: dict[str, Source] = {}
        own = {}
        for i, case in enumerate(("html5-boilerplate", "todomvc")):
            src = sources(built_demo[0], case)
            faithful = src.builds["faithful"]
            moved = [shifted(faithful.views[desktop_default(faithful)], dx) for dx in SHIFTS]
            graded, builds = graded_sources(src, VARIANTS, SEED + i, moved)
            shots += graded
            found |= builds
            own[case] = src.case.grading.thresholds
        yield Simulated(shots, found, own)


def _grade(source: Source, thresholds: Thresholds) -> dict[str, Any]:
    grading = source.grading.model_copy(update={"thresholds": thresholds})
    builds = (source.candidate, source.reference, source.starter)
    return grade_attempt(grading, *builds, first_viewport="desktop", evidence={}, served={})


def test_the_regrader_is_the_grader(simulated: Simulated) -> None:
    regrader = Regrader(simulated.sources)
    for shot in simulated.shots:  # the cases' own thresholds: the graded scores, exactly
        assert regrader.shot(shot, {}).dimensions == shot.dimensions, shot.attempt
    assert regrader.runs == len(simulated.sources)
    extreme = {
        "text_similarity": 1.0,
        "position_tolerance_px": 0,
        "overflow_tolerance_px": 0,
        "region_pass": 0.95,
    }
    for attempt in sorted(simulated.sources)[::10]:
        source = simulated.sources[attempt]
        own = _grade(source, source.grading.thresholds)
        for name, value in extreme.items():
            full = _grade(source, Thresholds.model_validate({name: value}))
            reached = {dim for dim, reads in REACHED_BY.items() if name in reads}
            for dim in set(DIMENSIONS) - reached:
                assert full["dimensions"][dim] == own["dimensions"][dim], (attempt, name, dim)
            rescored = regrader.dimensions(attempt, {name: value})
            for dim in reached:
                assert rescored[dim] == full["dimensions"][dim], (attempt, name, dim)


def test_fit_recovers_a_hidden_position_tolerance(simulated: Simulated) -> None:
    hidden = Regrader(simulated.sources)
    rng = random.Random(SEED)

    def honest(left: Shot, right: Shot, r: random.Random) -> str:
        seen = hidden.shot(left, HIDDEN_SETTING), hidden.shot(right, HIDDEN_SETTING)
        return hidden_choice(*seen, HIDDEN, SHARPNESS, r)

    pairs = candidates(simulated.shots)
    rows = [row for rater in RATERS for row in judgements(pairs, 500, rater, rng, honest, 25)]
    regrader = Regrader(simulated.sources)
    thresholding = Thresholding(regrader, {}, simulated.own)
    found = calibrate("sim", "demo", rows, by_digest(simulated.shots), {}, 0, 0.5, thresholding)

    assert len(rows) == 2000
    assert found.thresholds.position_tolerance_px == HIDDEN_SETTING["position_tolerance_px"]
    report = found.report.thresholds["position_tolerance_px"]
    assert report.grid == [float(v) for v in GRID["position_tolerance_px"]]
    assert report.current == {"html5-boilerplate": 24.0, "todomvc": 24.0}
    trials = {t.value: t for t in report.trials}
    chosen, own = trials[96.0], trials[None]
    assert chosen.log_loss < own.log_loss and chosen.agreement > own.agreement, report
    assert chosen.tied and not own.tied
    for neighbour in (48.0, 192.0):  # the grid neighbours fit worse, beyond a tie
        assert trials[neighbour].log_loss > chosen.log_loss and not trials[neighbour].tied
    # region_pass reaches only preservation's protected regions, which the demo's starter
    # never passes: every value scores alike, so each case's own is kept.
    assert found.thresholds.region_pass is None
    assert all(t.tied for t in found.report.thresholds["region_pass"].trials)
    assert found.report.sweeps == 2 and found.report.rescorings == regrader.runs > 0
    assert set(found.report.thresholds) == set(THRESHOLDS)
