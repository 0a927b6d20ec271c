"""From checked judgements and the release's capture scores to a :class:`Calibration`.

Pure: the judgements and the score table in, the artifact (weights, thresholds and
report) out. Agreement before calibration is measured for each dimension, each metric
term and the current composite (the weights each grade used); after, for the fitted
composite on held-out folds (:mod:`recon.calibrate.fit`). Every interval is a seeded
bootstrap 95%. Given a :class:`Thresholding`, the thresholds are chosen first
(:mod:`recon.calibrate.thresholds`) and the weights are those fitted at the chosen ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from recon.calibrate.agreement import Agreed, agreement
from recon.calibrate.fit import FOLDS, PLACES, Fitted, fit, rounded
from recon.calibrate.raters import MIN_CONSISTENCY, rate
from recon.calibrate.regrade import Regrader, Setting, thresholds_of
from recon.calibrate.scores import Shot
from recon.calibrate.thresholds import GRID, SWEEPS, Searched, search
from recon.model import Calibration, Judgement
from recon.model.calibration import (
    Agreement,
    FitReport,
    FittedThresholds,
    RaterReport,
    ThresholdReport,
    ThresholdTrial,
)
from recon.model.grading import DIMENSIONS, THRESHOLDS, Thresholds

METHOD = "bradley-terry/1: non-negative logistic regression on dimension differences, L2"
TARGET = {"left": 1.0, "right": 0.0, "tie": 0.5, "both-bad": 0.5}


@dataclass(frozen=True)
class Design:
    """The judgements as arrays: the pairs' shots, dimension differences (left − right),
    fit targets and decisive outcomes (+1 left, −1 right, 0 otherwise)."""

    pairs: list[tuple[Shot, Shot]]
    x: np.ndarray
    target: np.ndarray
    outcome: np.ndarray


def design(rows: Sequence[Judgement], table: Mapping[tuple[str, str, str], Shot]) -> Design:
    pairs = [(table[(r.case, r.point, r.left)], table[(r.case, r.point, r.right)]) for r in rows]
    x = np.array([[a.dimensions[d] - b.dimensions[d] for d in DIMENSIONS] for a, b in pairs])
    target = np.array([TARGET[r.choice] for r in rows])
    outcome = np.select([target == 1.0, target == 0.0], [1.0, -1.0], 0.0)
    return Design(pairs, x.reshape(len(rows), len(DIMENSIONS)), target, outcome)


@dataclass(frozen=True)
class Thresholding:
    """What fitting the thresholds needs: a re-grader of the judged captures' attempts,
    the thresholds the release's grades used (its calibration's value, or None for each
    case's own) and each judged case's own thresholds."""

    regrader: Regrader
    current: Setting
    own: Mapping[str, Thresholds]


def _model(agreed: Agreed) -> Agreement:
    def r(v: float) -> float:
        return round(v, PLACES)

    return Agreement(
        agreement=r(agreed.agreement),
        low=r(agreed.low),
        high=r(agreed.high),
        judgements=agreed.judgements,
    )


def term_agreement(d: Design, seed: int) -> dict[str, Agreement]:
    """Each metric term's agreement, over the judgements whose two captures both have it."""
    names = sorted({t for a, b in d.pairs for t in a.terms.keys() & b.terms.keys()})
    found = {}
    for name in names:
        has = np.array([name in a.terms and name in b.terms for a, b in d.pairs])
        diff = np.array([a.terms.get(name, 0.0) - b.terms.get(name, 0.0) for a, b in d.pairs])
        found[name] = _model(agreement(diff[has], d.outcome[has], seed))
    return found


def calibrate(
    ident: str,
    release: str,
    rows: Sequence[Judgement],
    table: Mapping[tuple[str, str, str], Shot],
    preferences: Mapping[str, str],
    seed: int = 0,
    min_consistency: float = MIN_CONSISTENCY,
    thresholding: Thresholding | None = None,
) -> Calibration:
    d = design(rows, table)
    current = np.array([a.composite() - b.composite() for a, b in d.pairs])
    searched = None if thresholding is None else fit_thresholds(rows, table, thresholding, seed)
    fitted = fit(d.x, d.target, seed) if searched is None else searched.fitted
    dims = {
        name: _model(agreement(d.x[:, i], d.outcome, seed)) for i, name in enumerate(DIMENSIONS)
    }
    raters = [
        RaterReport(
            rater=r.rater,
            judgements=r.judgements,
            repeats=r.repeats,
            consistency=None if r.consistency is None else round(r.consistency, PLACES),
            both_bad=round(r.both_bad, PLACES),
            flagged=r.flagged,
        )
        for r in rate(rows, min_consistency)
    ]
    report = FitReport(
        judgements=len(rows),
        decisive=int((d.outcome != 0).sum()),
        ties=sum(r.choice == "tie" for r in rows),
        both_bad=sum(r.choice == "both-bad" for r in rows),
        folds=FOLDS,
        l2=fitted.l2,
        scale=round(fitted.scale, PLACES),
        dimensions=dims,
        terms=term_agreement(d, seed),
        current=_model(agreement(current, d.outcome, seed)),
        fitted=_model(fitted.held_out),
        raters=raters,
    )
    chosen: dict[str, float] = {}
    if searched is not None and thresholding is not None:
        chosen = {k: v for k, v in searched.setting.items() if v is not None}
        report = report.model_copy(
            update={
                "thresholds": threshold_reports(searched, thresholding),
                "sweeps": SWEEPS,
                "rescorings": thresholding.regrader.runs,
            }
        )
    return Calibration(
        id=ident,
        release=release,
        method=METHOD,
        preferences=dict(preferences),
        weights=rounded(fitted.weights(), DIMENSIONS),
        thresholds=FittedThresholds.model_validate(chosen),
        report=report,
    )


def fit_thresholds(
    rows: Sequence[Judgement],
    table: Mapping[tuple[str, str, str], Shot],
    thresholding: Thresholding,
    seed: int = 0,
) -> Searched:
    """The thresholds' coordinate search, each setting scored by the weights' held-out fit
    over the judged captures re-scored at it."""
    judged = {
        key: table[key]
        for r in rows
        for key in ((r.case, r.point, r.left), (r.case, r.point, r.right))
    }

    def evaluate(setting: Setting) -> Fitted:
        rescored = {key: thresholding.regrader.shot(s, setting) for key, s in judged.items()}
        d = design(rows, rescored)
        return fit(d.x, d.target, seed)

    own = {
        name: [float(getattr(t, name)) for _, t in sorted(thresholding.own.items())]
        for name in THRESHOLDS
    }
    return search(evaluate, thresholding.current, own)


def threshold_reports(searched: Searched, th: Thresholding) -> dict[str, ThresholdReport]:
    def r(v: float) -> float:
        return round(v, PLACES)

    return {
        name: ThresholdReport(
            grid=[float(v) for v in GRID[name]],
            current={
                case: float(getattr(thresholds_of(own, th.current), name))
                for case, own in sorted(th.own.items())
            },
            trials=[
                ThresholdTrial(
                    value=t.value,
                    log_loss=r(t.fitted.log_loss),
                    agreement=r(t.fitted.held_out.agreement),
                    tied=t.tied,
                )
                for t in searched.trials[name]
            ],
            chosen=searched.setting[name],
        )
        for name in THRESHOLDS
    }
