"""Pairwise agreement of a score with people's choices, with a bootstrap interval. Pure.

Ties are handled as Design2Code's human evaluation and Chatbot Arena's analyses do:
agreement is measured on the decisive judgements only (``left`` or ``right``); a human
``tie`` or ``both-bad`` is left out of agreement (and counted in the report). A metric
that cannot separate a decisive pair (its two scores within ``EPS``) earns half a point,
as a coin flip would. In the fit (:mod:`recon.calibrate.fit`) a tie or both-bad is half a
win for each side, as Arena's Bradley–Terry fit counts ties.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPS = 1e-9
RESAMPLES = 1000
LEVEL = 0.95


@dataclass(frozen=True)
class Agreed:
    agreement: float
    low: float
    high: float
    judgements: int


def points(difference: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """Per decisive judgement: 1 when the score's difference (left − right) has the sign
    of the choice (``outcome`` +1 left, −1 right), 0 against it, 0.5 when it is a tie."""
    sign = np.where(np.abs(difference) <= EPS, 0.0, np.sign(difference))
    return np.where(sign == 0, 0.5, (sign == outcome).astype(float))


def summarise(scores: np.ndarray, seed: int = 0, resamples: int = RESAMPLES) -> Agreed:
    """The mean of per-judgement points and its percentile bootstrap 95% interval."""
    n = len(scores)
    if n == 0:
        return Agreed(0.5, 0.0, 1.0, 0)
    rng = np.random.default_rng(seed)
    means = scores[rng.integers(0, n, size=(resamples, n))].mean(axis=1)
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Agreed(float(scores.mean()), float(low), float(high), n)


def agreement(difference: np.ndarray, outcome: np.ndarray, seed: int = 0) -> Agreed:
    """:func:`summarise` of :func:`points` over the decisive judgements (outcome ±1)."""
    decisive = outcome != 0
    return summarise(points(difference[decisive], outcome[decisive]), seed)
