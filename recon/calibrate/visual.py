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
- ``held_out``: the shipped composition (:func:`recon.grade.global_visual.compose`: the
  weighted mean of the applicable terms times the guard) judged on ``FOLDS`` folds split
  by page (no page is in both), the weights fitted again on the other folds each time
  (their L2 chosen on those folds' pages, split again by page: nothing of the held-out
  fold is seen).
  This is the figure a choice is justified by; ``in_sample`` (the final weights on every
  pair) is context.
- ``before``: the metric's own fit (``global_visual.DEFAULT``) on the same pairs.

The guard's floors are not fitted: they keep ``DEFAULT``'s (the card says why: they bound
what a first-screen-only page scores). Pure given the scores: numbers in, a
:class:`~recon.model.calibration.VisualFit` out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import get_args

import numpy as np

from recon.calibrate.agreement import points, summarise
from recon.calibrate.fit import fit, group_folds, rounded
from recon.calibrate.study import Pair, name
from recon.errors import ConfigError
from recon.grade import global_visual
from recon.model.calibration import Agreement, PathFit, VisualFit
from recon.model.grading import ContentTerm, ImageTerm, VisualWeights

Scores = Mapping[str, float]
TERMS: dict[str, tuple[str, ...]] = {"content": get_args(ContentTerm), "image": get_args(ImageTerm)}
METHOD = (
    "bradley-terry/1 on the differences of global visual's appearance terms, per path; "
    "held out: 5 folds split by page, weights refitted per fold, guard included"
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


def _judged(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], path: str, weights: VisualWeights
) -> np.ndarray:
    """Per pair, 1 / 0 / 0.5: the composed score agrees, disagrees or ties."""
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
) -> tuple[VisualWeights, dict[str, PathFit]]:
    """The fitted weights (``base``'s floors) and, per path, how well they agree."""
    if not pairs:
        raise ConfigError("the study has no consensus pair (ties and disagreements are left "
                          "out); judge more pairs before fitting")  # fmt: skip
    target = (np.array([p.winner for p in pairs], dtype=np.float64) + 1) / 2
    fold = group_folds([p.page for p in pairs], seed)
    fitted = base
    paths: dict[str, PathFit] = {}
    for path, terms in TERMS.items():
        x = _design(pairs, scores, path)
        final = fit(x, target, seed, fold)
        weights = rounded(final.beta / final.scale, terms) if final.scale > 0 else base.path(path)
        got, per_fold = [], []
        for f in range(int(fold.max()) + 1):
            train, test = fold != f, fold == f
            pages = [p.page for p, t in zip(pairs, train, strict=True) if t]
            model = fit(x[train], target[train], seed, group_folds(pages, seed))
            w = rounded(model.beta / model.scale, terms) if model.scale > 0 else base.path(path)
            per_fold.append(w)
            got.append(_judged([p for p, t in zip(pairs, test, strict=True) if t], scores,
                               path, _with(base, path, w)))  # fmt: skip
        fitted = _with(fitted, path, weights)
        paths[path] = PathFit(
            before=_agreement(_judged(pairs, scores, path, base), seed),
            in_sample=_agreement(_judged(pairs, scores, path, fitted), seed),
            held_out=_agreement(np.concatenate(got), seed),
            folds=per_fold,
            l2=final.l2,
        )
    return VisualWeights.model_validate(fitted.model_dump()), paths


def visual_fit(
    pairs: Sequence[Pair],
    scores: Mapping[str, Scores],
    study: dict[str, str],
    renderer: str,
    viewport: str,
    seed: int = 0,
) -> VisualFit:
    """:func:`fit_visual` recorded with what it was fitted on."""
    weights, paths = fit_visual(pairs, scores, seed)
    return VisualFit(
        method=METHOD,
        study=study,
        renderer=renderer,
        viewport=viewport,
        pairs=len(pairs),
        weights=weights,
        paths=paths,
    )
