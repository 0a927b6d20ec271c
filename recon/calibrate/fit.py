"""Non-negative dimension weights from pairwise preferences: Bradley–Terry on score
differences, L2-regularised, with k-fold held-out agreement. Pure numpy.

Model: P(left preferred) = σ(βᵀ(x_left − x_right)), β ≥ 0 over the seven dimensions (each
in [0, 1], unscaled, so β's proportions are weights). A ``left`` is target 1, ``right``
0, ``tie`` and ``both-bad`` 0.5 (half a win for each side, as Arena's fit counts ties).
Minimised: mean log-loss + λ‖β‖², by projected Newton steps with backtracking on the
non-negative orthant. λ is chosen from ``L2_GRID`` by the mean held-out log-loss over
``FOLDS`` seeded folds; the fitted composite's held-out agreement is measured on the same
folds with that λ (the choice of one of four λ on those folds is the only optimism left
in it). The weights are β / Σβ; Σβ is the model's ``scale``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from recon.calibrate.agreement import Agreed, points, summarise
from recon.errors import ConfigError

FOLDS = 5
PLACES = 6
"""Fitted weights are written to this many decimals."""
L2_GRID = (1e-4, 1e-3, 1e-2, 1e-1)
MAX_STEPS = 200
TOLERANCE = 1e-10


@dataclass(frozen=True)
class Fitted:
    beta: np.ndarray  # non-negative coefficients, one per feature
    l2: float
    held_out: Agreed  # the fitted composite's agreement on held-out decisive judgements
    losses: np.ndarray  # each judgement's held-out log-loss with that λ (what chose it)

    @property
    def log_loss(self) -> float:
        return float(self.losses.mean())

    @property
    def scale(self) -> float:
        return float(self.beta.sum())

    def weights(self) -> np.ndarray:
        if self.scale <= 0:
            raise ConfigError(
                "the fit found no dimension that predicts the preferences (every weight is 0); "
                "collect more judgements, or check that the pairs differ in score"
            )
        return self.beta / self.scale


def _each(beta: np.ndarray, x: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Each judgement's log-loss under β."""
    z = x @ beta
    return np.asarray(np.logaddexp(0, -z) * t + np.logaddexp(0, z) * (1 - t))


def _loss(beta: np.ndarray, x: np.ndarray, t: np.ndarray, l2: float) -> float:
    return float(np.mean(_each(beta, x, t)) + l2 * beta @ beta)


def solve(x: np.ndarray, t: np.ndarray, l2: float) -> np.ndarray:
    """β ≥ 0 minimising mean log-loss + l2·‖β‖² (projected Newton, backtracking)."""
    n, k = x.shape
    beta = np.zeros(k)
    loss = _loss(beta, x, t, l2)
    for _ in range(MAX_STEPS):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (p - t) / n + 2 * l2 * beta
        free = (beta > 0) | (grad < 0)
        if not free.any():
            break
        hess = (x[:, free].T * (p * (1 - p))) @ x[:, free] / n + 2 * l2 * np.eye(free.sum())
        step = np.zeros(k)
        step[free] = np.linalg.solve(hess, grad[free])
        size, new, new_loss = 1.0, beta, loss
        while size > 1e-12:
            new = np.maximum(beta - size * step, 0.0)
            new_loss = _loss(new, x, t, l2)
            if new_loss <= loss - 1e-4 * grad @ (beta - new):
                break
            size /= 2
        if loss - new_loss < TOLERANCE:
            beta = new if new_loss < loss else beta
            break
        beta, loss = new, new_loss
    return beta


def folds(n: int, seed: int, k: int = FOLDS) -> np.ndarray:
    """A fold number per judgement, balanced and seeded."""
    if n < k:
        raise ConfigError(f"{n} judgement(s) cannot be split into {k} folds; collect more")
    return np.random.default_rng(seed).permutation(np.arange(n) % k)


def group_folds(groups: list[str], seed: int, k: int = FOLDS) -> np.ndarray:
    """A fold number per judgement such that every judgement of one group (a page) is in
    the same fold: the groups shuffled (seeded) and dealt round the folds."""
    names = sorted(set(groups))
    if len(names) < k:
        raise ConfigError(f"{len(names)} group(s) cannot be split into {k} folds; collect more")
    order = np.random.default_rng(seed).permutation(len(names))
    fold_of = {names[i]: n % k for n, i in enumerate(order)}
    return np.array([fold_of[g] for g in groups])


def _held_out(
    x: np.ndarray, t: np.ndarray, fold: np.ndarray, l2: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each judgement's held-out log-loss and, per decisive held-out judgement, its
    agreement point."""
    losses, agreed = np.zeros(len(t)), []
    for f in np.unique(fold):
        train, test = fold != f, fold == f
        beta = solve(x[train], t[train], l2)
        losses[test] = _each(beta, x[test], t[test])
        decisive = test & (t != 0.5)
        agreed.append(points(x[decisive] @ beta, np.where(t[decisive] == 1, 1.0, -1.0)))
    return losses, np.concatenate(agreed)


def fit(x: np.ndarray, t: np.ndarray, seed: int = 0, fold: np.ndarray | None = None) -> Fitted:
    """Choose λ by held-out log-loss, report held-out agreement, fit on everything.

    ``fold`` gives each judgement's fold (:func:`group_folds`, to keep a page's judgements
    together); by default :func:`folds`."""
    fold = folds(len(t), seed) if fold is None else fold
    trials = {l2: _held_out(x, t, fold, l2) for l2 in L2_GRID}
    l2 = min(L2_GRID, key=lambda lam: (float(trials[lam][0].mean()), -lam))
    losses, agreed = trials[l2]
    return Fitted(solve(x, t, l2), l2, summarise(agreed, seed), losses)


def rounded(weights: np.ndarray, names: Sequence[str]) -> dict[str, float]:
    """Weights (summing to 1) to ``PLACES`` decimals, named, still summing to 1: the largest
    takes the rest."""
    values = [round(float(w), PLACES) for w in weights]
    top = int(np.argmax(values))
    values[top] = round(1.0 - sum(v for i, v in enumerate(values) if i != top), PLACES)
    return dict(zip(names, values, strict=True))
