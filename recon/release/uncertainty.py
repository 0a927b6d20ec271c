"""Standard errors, seeded bootstrap intervals and tie bands (DESIGN §7). Pure functions.

- A case score is the mean of an entry's valid repeats on the case; its standard error is
  their sample standard deviation (``ddof=1``) over the square root of their number (none
  below two repeats).
- An entry score is the mean of its case scores over the active cases; its standard error
  is the sample standard deviation of the case scores over the square root of the number
  of cases (the two-stage estimate: cases are the sampled unit, and the spread of their
  means already carries the repeats' noise).
- Intervals are 95% percentile bootstraps (``numpy.percentile``, linear) of ``resamples``
  resamples, each from its own generator ``numpy.random.default_rng([seed, h])`` where
  ``h`` is the first 8 bytes (big-endian) of the blake3 of the name of what is resampled
  (``<entry>``, ``<entry>/case:<case>``, ``<entry>/dimension:<name>``). A case's
  resample draws its repeats with replacement (``rng.integers(0, n, size=(B, n))``). An
  entry's resample draws the cases with replacement (``rng.integers(0, K, size=(B, K))``),
  then the repeats within each drawn case: uniforms ``rng.random((B, K, N))`` with ``N``
  the largest repeat count, repeat ``j`` of a case of ``n`` repeats being
  ``min(floor(u * n), n - 1)`` for the first ``n`` uniforms of its row.
- Ranked entries whose adjacent intervals overlap share a tie band: the ranks from the
  first to the last entry of a chain of overlapping neighbours.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import blake3
import numpy as np
from numpy.typing import NDArray

LEVEL = 0.95
CHUNK = 4_000_000
"""Uniforms drawn at once for an entry's bootstrap (the result does not depend on it)."""


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def standard_error(values: Sequence[float]) -> float | None:
    """Sample standard deviation over sqrt(n); None below two values."""
    n = len(values)
    if n < 2:
        return None
    m = mean(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / (n - 1)) / math.sqrt(n)


def rng_for(seed: int, name: str) -> np.random.Generator:
    """The generator of one resampled quantity, independent of every other's."""
    h = int.from_bytes(blake3.blake3(name.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng([seed, h])


def _interval(stats: NDArray[np.float64]) -> tuple[float, float]:
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return float(low), float(high)


def case_interval(
    values: Sequence[float], rng: np.random.Generator, resamples: int
) -> tuple[float, float]:
    """Bootstrap interval of a mean of repeats (at least one)."""
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    idx = rng.integers(0, n, size=(resamples, n))
    return _interval(x[idx].mean(axis=1))


def entry_interval(
    cases: Sequence[Sequence[float]], rng: np.random.Generator, resamples: int
) -> tuple[float, float]:
    """Bootstrap interval of a mean of case means: cases, then repeats within each case."""
    k = len(cases)
    counts = np.array([len(c) for c in cases], dtype=np.int64)
    width = int(counts.max())
    table = np.zeros((k, width), dtype=np.float64)
    for i, values in enumerate(cases):
        table[i, : len(values)] = values
    picks = rng.integers(0, k, size=(resamples, k))
    stats = np.empty(resamples, dtype=np.float64)
    rows = max(1, CHUNK // (k * width))
    for start in range(0, resamples, rows):
        block = picks[start : start + rows]
        n = counts[block]  # (b, k): the repeat count of each drawn case
        u = rng.random((len(block), k, width))
        j = np.minimum(np.floor(u * n[..., None]).astype(np.int64), n[..., None] - 1)
        drawn = table[block[..., None], j]
        kept = np.arange(width) < n[..., None]
        case_means = np.where(kept, drawn, 0.0).sum(axis=2) / n
        stats[start : start + rows] = case_means.mean(axis=1)
    return _interval(stats)


def tie_bands(
    ranked: Sequence[tuple[int, tuple[float, float]]],
) -> list[tuple[int, int]]:
    """For (rank, interval) in rank order, each one's band: (first rank, last rank) of the
    chain of neighbours whose intervals overlap."""
    bands: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(ranked) + 1):
        tied = i < len(ranked) and ranked[i][1][1] >= ranked[i - 1][1][0]
        if not tied:
            band = (ranked[start][0], ranked[i - 1][0])
            bands.extend([band] * (i - start))
            start = i
    return bands
