"""The weighted total of the dimensions, with every term of the arithmetic kept.

The arithmetic (each dimension's sealed weight and its product) stays in the grade table,
on the sealed side of the store: what leaves it for the release JSON and the site is each
dimension's value, its public terms and the total (``recon.release.aggregate``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recon.errors import HarnessError


@dataclass(frozen=True)
class Composed:
    total: float
    arithmetic: list[dict[str, Any]]


def clamp(value: float, what: str) -> float:
    """``value`` within [0, 1]; a NaN or infinite score is a harness bug, never a grade."""
    if not math.isfinite(value):
        raise HarnessError(f"compose: {what} is {value!r}, not a finite number (a metric bug)")
    return min(1.0, max(0.0, value))


def compose(dimensions: Mapping[str, float], weights: Mapping[str, float]) -> Composed:
    """``total = Σ weight × clamp(dimension)`` over the weighted dimensions, summed exactly
    (``math.fsum``: weights of 0.2 + 0.2 + 0.15 + 0.1 + 0.25 + 0.1 added left to right give
    0.9999999999999999, so the reference graded against itself would not total 1).

    Every dimension is clamped to [0, 1] before weighting, so no dimension can contribute
    more than its weight or less than nothing (a row whose measured value was outside
    keeps it as ``measured``). Weights must be finite and non-negative.
    """
    missing = sorted(set(weights) - set(dimensions))
    if missing:
        raise HarnessError(f"compose: no score for weighted dimension(s) {missing}")
    rows: list[dict[str, Any]] = []
    products: list[float] = []
    for name in sorted(weights):
        weight = float(weights[name])
        if not math.isfinite(weight) or weight < 0:
            raise HarnessError(f"compose: weight of {name} is {weight!r}; weights are >= 0")
        measured = float(dimensions[name])
        value = clamp(measured, f"dimension {name}")
        product = weight * value
        products.append(product)
        row = {"term": name, "weight": weight, "value": value, "product": product}
        rows.append(row | ({"measured": measured} if measured != value else {}))
    return Composed(total=clamp(math.fsum(products), "the total"), arithmetic=rows)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
