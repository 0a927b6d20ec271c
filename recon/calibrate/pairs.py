"""Which pairs a collection page shows, and in which order: pure and seeded.

Informative pairs first (issue 15): two captures of the same matrix point by different
entries, drawn without replacement with probability proportional to
``exp(-|Δ composite| / CLOSENESS)``, so pairs the current composite barely separates are
shown most. A share of the drawn pairs (``REPEAT_SHARE``, at least one) is shown a second
time later in the session, its order drawn again: a rater's agreement with themselves on
those is their self-consistency (:mod:`recon.calibrate.raters`). Each pair's own seed
decides its left/right order, and is recorded in the sealed pair key.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from itertools import combinations

from recon.calibrate.scores import Shot, by_digest
from recon.errors import ConfigError

CLOSENESS = 0.1
REPEAT_SHARE = 0.1
MAX_SEED = 2**63 - 1


@dataclass(frozen=True)
class Chosen:
    id: str  # the opaque page id: p0001, p0002...
    left: Shot
    right: Shot
    seed: int
    repeat_of: str | None = None


def candidates(found: list[Shot]) -> list[tuple[Shot, Shot]]:
    """Every pair of distinct captures of one point by different entries."""
    groups: dict[tuple[str, str], list[Shot]] = {}
    for shot in by_digest(found).values():
        groups.setdefault((shot.case, shot.point), []).append(shot)
    return [
        (a, b)
        for _, group in sorted(groups.items())
        for a, b in combinations(sorted(group, key=lambda s: s.digest), 2)
        if a.entry != b.entry
    ]


def _draw(pool: list[tuple[Shot, Shot]], count: int, rng: random.Random) -> list[tuple[Shot, Shot]]:
    """``count`` pairs without replacement, close ones likelier (Efraimidis–Spirakis keys)."""

    def key(pair: tuple[Shot, Shot]) -> float:
        weight = math.exp(-abs(pair[0].composite() - pair[1].composite()) / CLOSENESS)
        return rng.random() ** (1.0 / max(weight, 1e-300))

    return sorted(pool, key=key, reverse=True)[:count]


def _ordered(pair: tuple[Shot, Shot], seed: int) -> tuple[Shot, Shot]:
    """The pair's left/right order, decided by its seed alone."""
    return pair if random.Random(seed).random() < 0.5 else (pair[1], pair[0])


def choose(found: list[Shot], count: int, seed: int) -> list[Chosen]:
    """``count`` pairs to show (repeats included), in showing order."""
    pool = candidates(found)
    if not pool:
        raise ConfigError(
            "the release has no two captures of one matrix point by different entries; "
            "build a release with at least two entries that produce valid attempts"
        )
    if count < 2:
        raise ConfigError(f"--pairs {count}: show at least 2 pairs (one of them repeated)")
    rng = random.Random(seed)
    repeats = max(1, round(count * REPEAT_SHARE), count - len(pool))
    unique = _draw(pool, count - repeats, rng)
    rng.shuffle(unique)
    shown: list[tuple[int, bool]] = [(i, False) for i in range(len(unique))]  # (pair, repeat?)
    for i in range(repeats):
        original = rng.randrange(len(unique)) if i < len(unique) else i % len(unique)
        first = shown.index((original, False))
        shown.insert(rng.randint(first + 1, len(shown)), (original, True))
    ids: dict[int, str] = {}
    out: list[Chosen] = []
    for n, (i, repeat) in enumerate(shown, start=1):
        pid = f"p{n:04d}"
        pair_seed = rng.randrange(MAX_SEED)
        left, right = _ordered(unique[i], pair_seed)
        out.append(Chosen(pid, left, right, pair_seed, ids[i] if repeat else None))
        ids.setdefault(i, pid)
    return out
