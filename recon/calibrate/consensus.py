"""How often a score agrees with a study's consensus, and the scores it is measured on.

Pure: renders in, numbers out. Every reconstruction of a page is scored against the
page's original by

- ``content``: global visual (``recon.grade.global_visual``) with both DOM snapshots,
  the grade cell's path for a capture;
- ``image``: global visual without them, the path of workflow checkpoint screenshots;
- ``ssim``: plain SSIM (``recon.grade._ssim``: uniform 7x7 window, skimage's defaults) of
  the grayscale stills, the reconstruction's resized to the original's size;

and every term of the two global-visual paths is reported as ``content.<term>`` and
``image.<term>``. A score *agrees* on a consensus pair when it is higher for the
reconstruction both raters chose; two scores within ``EPS`` of each other are the
metric's tie and count half, as :mod:`recon.calibrate.agreement` counts them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from recon.calibrate.agreement import EPS, RESAMPLES, points, summarise
from recon.calibrate.renders import Render
from recon.calibrate.study import ORIGINAL, Pair, Study, name
from recon.grade import global_visual, mean_ssim

Scores = dict[str, float]
METRICS = ("content", "image", "ssim")
"""The scores every reconstruction gets (their terms come beside them)."""


@dataclass(frozen=True)
class Count:
    """Agreement of one score with the consensus: ``agree`` pairs where it is higher for
    the chosen side, ``ties`` where it cannot tell, over ``pairs``; ``share`` counts a tie
    as half; ``low``–``high`` is its percentile bootstrap 95% interval over pairs."""

    agree: int
    ties: int
    pairs: int
    share: float
    low: float
    high: float

    def as_json(self) -> dict[str, float | int]:
        return {
            "agree": self.agree,
            "pairs": self.pairs,
            "share": round(self.share, 6),
            "ties": self.ties,
            "low": round(self.low, 6),
            "high": round(self.high, 6),
        }


def plain_ssim(candidate: np.ndarray, reference: np.ndarray) -> float:
    """SSIM of two RGB stills in grayscale, the candidate resized to the reference."""
    ref = Image.fromarray(reference).convert("L")
    cand = Image.fromarray(candidate).convert("L")
    if cand.size != ref.size:
        cand = cand.resize(ref.size, Image.Resampling.BILINEAR)
    return mean_ssim(np.asarray(cand, dtype=np.int64), np.asarray(ref, dtype=np.int64))


def page_scores(candidate: Render, reference: Render) -> Scores:
    """One reconstruction's metrics and terms against its original."""
    content = global_visual.score(
        candidate.image,
        reference.image,
        candidate_dom=candidate.dom,
        reference_dom=reference.dom,
    )
    image = global_visual.score(candidate.image, reference.image)
    scores: Scores = {
        "content": content.score,
        "image": image.score,
        "ssim": plain_ssim(candidate.image, reference.image),
    }
    scores |= {f"content.{k}": v for k, v in content.terms.items()}
    scores |= {f"image.{k}": v for k, v in image.terms.items()}
    return scores


def study_scores(
    study: Study,
    renders: Mapping[str, Render],
    score: Callable[[Render, Render], Scores] = page_scores,
) -> dict[str, Scores]:
    """Every reconstruction's scores (``page/method`` -> scores), originals left out."""
    found: dict[str, Scores] = {}
    for key in study.pages:
        page, method = key.split("/", 1)
        if method != ORIGINAL:
            found[key] = score(renders[key], renders[name(page, ORIGINAL)])
    return found


def differences(pairs: Sequence[Pair], scores: Mapping[str, Scores], metric: str) -> np.ndarray:
    """``a``'s score minus ``b``'s, per pair (NaN where a side lacks the metric)."""
    out = []
    for p in pairs:
        a, b = scores[name(p.page, p.a)], scores[name(p.page, p.b)]
        out.append(a[metric] - b[metric] if metric in a and metric in b else np.nan)
    return np.array(out, dtype=np.float64)


def count(
    difference: np.ndarray, winner: np.ndarray, seed: int = 0, resamples: int = RESAMPLES
) -> Count:
    """:class:`Count` of one score's differences (``a`` − ``b``) against the winners
    (+1 ``a``, −1 ``b``), over the pairs where the difference is known."""
    known = ~np.isnan(difference)
    diff, won = difference[known], winner[known]
    got = points(diff, won)
    agreed = summarise(got, seed, resamples)
    ties = int((np.abs(diff) <= EPS).sum())
    return Count(int((got == 1.0).sum()), ties, len(got), agreed.agreement, agreed.low, agreed.high)


def agreement_table(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], seed: int = 0, resamples: int = RESAMPLES
) -> dict[str, Count]:
    """Every metric's and term's :class:`Count` over the consensus pairs, metrics first,
    then terms by name (a term some reconstruction lacks counts where both sides have it)."""
    winner = np.array([p.winner for p in pairs], dtype=np.float64)
    names = sorted({k for s in scores.values() for k in s} - set(METRICS))
    return {
        metric: count(differences(pairs, scores, metric), winner, seed, resamples)
        for metric in (*METRICS, *names)
    }
