"""Rater quality: self-consistency on pairs shown twice, and "both bad" rates. Pure.

A rater who judged the same two captures more than once (the page repeats a share of its
pairs, with their order drawn again) is consistent on a repeat when it names the same
capture, or the same ``tie`` or ``both-bad``, as their first judgement of that pair. A
rater with at least ``MIN_REPEATS`` repeats and a consistency below ``MIN_CONSISTENCY`` is
flagged. An honest rater choosing a side has an expected consistency of p² + (1 − p)² ≥ 0.5
on a pair they prefer with probability p; one answering at random among the four choices
has 0.25, one flipping a coin between the two sides 0.5 (which this check cannot tell from an
honest rater on pairs that are coin flips to everyone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recon.model import Judgement

MIN_REPEATS = 5
MIN_CONSISTENCY = 0.5


@dataclass(frozen=True)
class Rated:
    rater: str
    judgements: int
    repeats: int
    consistency: float | None
    both_bad: float
    flagged: bool


def verdict(row: Judgement) -> str:
    """What the rater said, independent of the left/right order: the preferred capture's
    digest, or ``tie`` / ``both-bad``."""
    if row.choice == "left":
        return row.left
    if row.choice == "right":
        return row.right
    return row.choice


def rate(rows: Sequence[Judgement], min_consistency: float = MIN_CONSISTENCY) -> list[Rated]:
    by_rater: dict[str, list[Judgement]] = {}
    for row in sorted(rows, key=lambda r: (r.rater, r.time, r.seed)):
        by_rater.setdefault(row.rater, []).append(row)
    found = []
    for rater, mine in sorted(by_rater.items()):
        first: dict[tuple[str, ...], str] = {}
        same = repeats = 0
        for row in mine:
            pair = tuple(sorted((row.left, row.right)))
            if pair in first:
                repeats += 1
                same += verdict(row) == first[pair]
            else:
                first[pair] = verdict(row)
        consistency = same / repeats if repeats else None
        flagged = consistency is not None and repeats >= MIN_REPEATS
        flagged = flagged and consistency is not None and consistency < min_consistency
        both_bad = sum(r.choice == "both-bad" for r in mine) / len(mine)
        found.append(Rated(rater, len(mine), repeats, consistency, both_bad, flagged))
    return found
