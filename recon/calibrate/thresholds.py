"""Thresholds chosen by held-out log-loss: a coordinate search over declared grids. Pure.

Each threshold of ``grading.yaml`` (:data:`recon.model.grading.THRESHOLDS`) has a finite
:data:`GRID`. Its candidates are the grid, each case's own value (``None``) and the value
the release's grades used when its calibration set one. A candidate is scored by
``evaluate(setting)``: the judged captures re-scored at that setting by the real grader
(:mod:`recon.calibrate.regrade`), the Bradley–Terry weights fitted as without thresholds
(:func:`recon.calibrate.fit.fit`, λ chosen on the same folds), and the held-out log-loss
read. The search sweeps the thresholds in :data:`THRESHOLDS` order :data:`SWEEPS` times,
each time setting one threshold to its best candidate with the others held. A candidate
whose held-out log-loss is within one paired standard error of the best's (the
one-standard-error rule; :data:`STANDARD_ERRORS`), or within :data:`TIE` nats per
judgement, is a tie, and ties go to the value the
release's grades used (then the nearest to it, then each case's own value, then the
smaller value): a threshold moves only on evidence. Deterministic: the folds are seeded
and every evaluation is remembered per setting.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from recon.calibrate.fit import Fitted
from recon.calibrate.regrade import Setting
from recon.model.grading import THRESHOLDS

GRID: dict[str, tuple[float, ...]] = {
    "text_similarity": (0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    "position_tolerance_px": (0, 8, 16, 24, 48, 96, 192),
    "overflow_tolerance_px": (0, 1, 4, 16, 64),
    "region_pass": (0.5, 0.6, 0.7, 0.8, 0.9, 0.95),
}
"""The declared candidate values of each threshold (``recon/calibrate/CARD.md``)."""
SWEEPS = 2
STANDARD_ERRORS = 1.0
"""A candidate whose held-out log-loss is within this many paired standard errors of the
best's is a tie (the one-standard-error rule of cross-validated model choice)..."""
TIE = 1e-3
"""...or within this many nats per judgement of it (2 nats over 2,000 judgements: a
likelihood ratio under e²), however consistent the gain: too little to move a threshold."""


@dataclass(frozen=True)
class Trial:
    value: float | None  # None: each case's own value
    fitted: Fitted
    tied: bool = False  # within the tie margin of the best candidate of its sweep


def gap(trial: Trial, best: Trial) -> tuple[float, float]:
    """How much worse ``trial``'s held-out log-loss is than ``best``'s, per judgement, and
    the standard error of that mean over the (paired) judgements."""
    d = trial.fitted.losses - best.fitted.losses
    se = float(d.std(ddof=1) / math.sqrt(len(d))) if len(d) > 1 else 0.0
    return float(d.mean()), se


def ties(tried: list[Trial]) -> list[Trial]:
    """``tried`` marked: tied with the lowest held-out log-loss when within
    ``STANDARD_ERRORS`` paired standard errors of it (or ``TIE``)."""
    low = min(tried, key=lambda t: t.fitted.log_loss)
    marked = []
    for t in tried:
        mean, se = gap(t, low)
        marked.append(replace(t, tied=mean <= max(TIE, STANDARD_ERRORS * se)))
    return marked


@dataclass(frozen=True)
class Searched:
    setting: dict[str, float | None]  # the chosen value of each threshold
    trials: dict[str, list[Trial]]  # each threshold's candidates in the last sweep
    fitted: Fitted  # the fit at the chosen setting
    evaluations: int  # distinct settings fitted


def candidates(name: str, current: float | None) -> list[float | None]:
    """Each case's own value, the grid, and the value the grades used if it is neither."""
    found: list[float | None] = [None, *GRID[name]]
    return found if current in found else [*found, current]


def _distance(value: float | None, current: float | None, own: list[float]) -> float:
    """How far ``value`` moves the cases from the values their grades used (mean |Δ|)."""
    used = [own_value if current is None else current for own_value in own]
    moved = [own_value if value is None else value for own_value in own]
    return sum(abs(a - b) for a, b in zip(used, moved, strict=True)) / max(1, len(own))


def best(tried: list[Trial], current: float | None, own: list[float]) -> Trial:
    """Among the candidates tied with the lowest held-out log-loss (:func:`ties`), the
    value the grades used, else the nearest to it, then each case's own value, then the
    smaller."""
    return min(
        (t for t in tried if t.tied),
        key=lambda t: (
            t.value != current,
            _distance(t.value, current, own),
            t.value is not None,
            t.value or 0.0,
        ),
    )


def search(
    evaluate: Callable[[Setting], Fitted],
    current: Mapping[str, float | None],
    own: Mapping[str, list[float]],
) -> Searched:
    """The coordinate search from ``current`` (what the release's grades used: a value
    for every case, or None for each case's own); ``own`` is each threshold's per-case
    values (for tie-breaking by distance)."""
    seen: dict[tuple[float | None, ...], Fitted] = {}

    def at(setting: Mapping[str, float | None]) -> Fitted:
        key = tuple(setting[name] for name in THRESHOLDS)
        if key not in seen:
            seen[key] = evaluate(dict(setting))
        return seen[key]

    setting = {name: current.get(name) for name in THRESHOLDS}
    trials: dict[str, list[Trial]] = {}
    for _ in range(SWEEPS):
        for name in THRESHOLDS:
            tried = ties(
                [
                    Trial(value, at(setting | {name: value}))
                    for value in candidates(name, current.get(name))
                ]
            )
            setting[name] = best(tried, current.get(name), own[name]).value
            trials[name] = tried
    return Searched(setting, trials, at(setting), len(seen))
