"""Global visual's fit on a study of real reconstructions (issue 28): ``recon calibrate fit
--study DIR``.

A study (``recon.calibrate.study``) is rendered by recon's own capture path
(``recon.calibrate.renders``) and every reconstruction's terms are measured against its
original (``recon.calibrate.consensus``: the content path with both DOM snapshots, the
image path without). Then, for each path:

- ``weights``: Bradley–Terry (``recon.calibrate.fit``: non-negative, L2 chosen on 5 folds
  split by page) on the differences of the path's appearance terms over the consensus
  pairs, fitted on every pair; the weights are β / Σβ, rounded to 6 decimals and summing
  to 1.
- ``floors`` (:func:`floors`): the guard's floors (coverage, span, ink; the ink floor is
  shared by both paths) that make the fitted weights' scores agree with the most pairs of
  both paths, from the grid ``FLOORS``, ties going to the strictest. The appearance terms
  do not depend on them, so the weights are fitted first.
- ``held_out``: the shipped composition (:func:`recon.grade.global_visual.compose`: the
  weighted mean of the applicable terms times the guard) judged on ``FOLDS`` folds split
  by page (no page is in both), the weights and then the floors fitted again on the
  other folds each time (the L2 chosen on those folds' pages, split again by page:
  nothing of the held-out fold is seen); each fold's weights and floors are recorded.
  This is the figure a choice is justified by; ``in_sample`` (the final weights on every
  pair) is context.
- ``before``: the metric's own fit (``global_visual.DEFAULT``) on the same pairs.

Pure given the scores: numbers in, a :class:`~recon.model.calibration.VisualFit` out.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import get_args

import numpy as np

from recon.calibrate.agreement import points, summarise
from recon.calibrate.fit import Fitted, fit, group_folds, rounded
from recon.calibrate.study import Pair, name
from recon.errors import ConfigError
from recon.grade import global_visual
from recon.model.calibration import Agreement, PathFit, VisualFit
from recon.model.grading import ContentTerm, ImageTerm, VisualWeights

Scores = Mapping[str, float]
TERMS: dict[str, tuple[str, ...]] = {"content": get_args(ContentTerm), "image": get_args(ImageTerm)}
FLOORS: dict[str, tuple[float, ...]] = {
    "coverage_floor": (0.2, 0.3, 0.4, 0.5),
    "span_floor": (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
    "ink_floor": (0.3, 0.4, 0.5, 0.6),
}
"""The guard's floors :func:`floors` chooses among (``VisualWeights``' fields)."""
METHOD = (
    "bradley-terry/1 on the differences of global visual's appearance terms, per path; "
    "guard floors chosen on the grid; held out: 5 folds split by page, weights and floors "
    "refitted per fold"
)


def terms_of(scores: Scores, path: str) -> dict[str, float]:
    """One path's terms of a reconstruction (``<path>.<term>`` -> ``<term>``)."""
    prefix = f"{path}."
    return {k[len(prefix) :]: v for k, v in scores.items() if k.startswith(prefix)}


def composed(scores: Scores, path: str, weights: VisualWeights) -> float:
    """The path's score of a reconstruction under ``weights``, from its stored terms."""
    return global_visual.compose(terms_of(scores, path), weights).score


def _agreement(got: np.ndarray, seed: int) -> Agreement:
    a = summarise(got, seed)
    return Agreement(
        agreement=round(a.agreement, 6),
        low=round(a.low, 6),
        high=round(a.high, 6),
        judgements=a.judgements,
    )


def judged(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], path: str, weights: VisualWeights
) -> np.ndarray:
    """Per pair, 1 / 0 / 0.5: the path's composed score under ``weights`` agrees, disagrees
    or ties with the raters."""
    diff = np.array(
        [composed(scores[name(p.page, p.a)], path, weights)
         - composed(scores[name(p.page, p.b)], path, weights) for p in pairs]
    )  # fmt: skip
    return points(diff, np.array([p.winner for p in pairs], dtype=np.float64))


def _design(pairs: Sequence[Pair], scores: Mapping[str, Scores], path: str) -> np.ndarray:
    cols = [
        [scores[name(p.page, p.a)].get(f"{path}.{t}", 0.0)
         - scores[name(p.page, p.b)].get(f"{path}.{t}", 0.0) for p in pairs]
        for t in TERMS[path]
    ]  # fmt: skip
    return np.nan_to_num(np.array(cols, dtype=np.float64).T)


def _with(base: VisualWeights, path: str, weights: dict[str, float]) -> VisualWeights:
    return base.model_copy(update={path: weights})


def fit_visual(
    pairs: Sequence[Pair],
    scores: Mapping[str, Scores],
    seed: int = 0,
    base: VisualWeights = global_visual.DEFAULT,
) -> tuple[VisualWeights, dict[str, PathFit], list[dict[str, float]]]:
    """The fitted weights and floors, per path how well they agree, and each fold's floors."""
    if not pairs:
        raise ConfigError("the study has no consensus pair (ties and disagreements are left "
                          "out); judge more pairs before fitting")  # fmt: skip
    fold = group_folds([p.page for p in pairs], seed)
    fitted, finals = _trained(pairs, scores, seed, base)
    got: dict[str, list[np.ndarray]] = {path: [] for path in TERMS}
    per_fold: dict[str, list[dict[str, float]]] = {path: [] for path in TERMS}
    fold_floors: list[dict[str, float]] = []
    for f in range(int(fold.max()) + 1):
        train, test = fold != f, fold == f
        kept = [p for p, t in zip(pairs, train, strict=True) if t]
        w = trained(kept, scores, seed, base)
        for path in TERMS:
            per_fold[path].append(w.path(path))
        fold_floors.append({k: getattr(w, k) for k in FLOORS})
        held = [p for p, t in zip(pairs, test, strict=True) if t]
        for path in TERMS:
            got[path].append(judged(held, scores, path, w))
    paths = {
        path: PathFit(
            before=_agreement(judged(pairs, scores, path, base), seed),
            in_sample=_agreement(judged(pairs, scores, path, fitted), seed),
            held_out=_agreement(np.concatenate(got[path]), seed),
            folds=per_fold[path],
            l2=finals[path].l2,
        )
        for path in TERMS
    }
    return VisualWeights.model_validate(fitted.model_dump()), paths, fold_floors


def trained(
    pairs: Sequence[Pair],
    scores: Mapping[str, Scores],
    seed: int = 0,
    base: VisualWeights = global_visual.DEFAULT,
) -> VisualWeights:
    """``base`` with each path's weights fitted on ``pairs`` (Bradley–Terry, the L2 chosen
    on folds of their pages), then the guard's floors chosen on them: what
    :func:`fit_visual` fits on every pair and on each fold's training pairs."""
    return _trained(pairs, scores, seed, base)[0]


def _trained(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], seed: int, base: VisualWeights
) -> tuple[VisualWeights, dict[str, Fitted]]:
    target = (np.array([p.winner for p in pairs], dtype=np.float64) + 1) / 2
    fold = group_folds([p.page for p in pairs], seed)
    models = {path: fit(_design(pairs, scores, path), target, seed, fold) for path in TERMS}
    w = base
    for path, model in models.items():
        w = _with(w, path, _weights(model, path, base))
    return floors(pairs, scores, w), models


def _weights(model: Fitted, path: str, base: VisualWeights) -> dict[str, float]:
    return rounded(model.beta / model.scale, TERMS[path]) if model.scale > 0 else base.path(path)


def floors(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], weights: VisualWeights
) -> VisualWeights:
    """``weights`` with the guard's floors that make its scores agree with the most of
    ``pairs``, both paths counted (the ink floor is shared); ties go to the strictest
    floors (the largest coverage, then span, then ink floor). The appearance terms do
    not depend on the floors, so the weights need not be fitted again."""
    winners = np.array([p.winner for p in pairs], dtype=np.float64)
    shown = sorted({name(p.page, m) for p in pairs for m in (p.a, p.b)})
    terms = {path: {k: terms_of(scores[k], path) for k in shown} for path in TERMS}
    best: tuple[float, tuple[float, ...]] | None = None
    for grid in itertools.product(*FLOORS.values()):
        trial = weights.model_copy(update=dict(zip(FLOORS, grid, strict=True)))
        agree = 0.0
        for found in terms.values():
            score = {k: global_visual.compose(t, trial).score for k, t in found.items()}
            diff = np.array([score[name(p.page, p.a)] - score[name(p.page, p.b)] for p in pairs])
            agree += float(points(diff, winners).sum())
        if best is None or (agree, grid) > best:
            best = (agree, grid)
    assert best is not None  # FLOORS is not empty
    return weights.model_copy(update=dict(zip(FLOORS, best[1], strict=True)))


def visual_fit(
    pairs: Sequence[Pair],
    scores: Mapping[str, Scores],
    study: dict[str, str],
    renderer: str,
    viewport: str,
    seed: int = 0,
) -> VisualFit:
    """:func:`fit_visual` recorded with what it was fitted on."""
    weights, paths, fold_floors = fit_visual(pairs, scores, seed)
    return VisualFit(
        method=METHOD,
        study=study,
        renderer=renderer,
        viewport=viewport,
        pairs=len(pairs),
        weights=weights,
        paths=paths,
        floors=fold_floors,
    )
