"""The weighted total of the dimensions, with every term of the arithmetic kept."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recon.errors import HarnessError


@dataclass(frozen=True)
class Composed:
    total: float
    arithmetic: list[dict[str, Any]]


def compose(dimensions: Mapping[str, float], weights: Mapping[str, float]) -> Composed:
    """``total = Σ weight × dimension`` over the weighted dimensions, in a fixed order."""
    missing = sorted(set(weights) - set(dimensions))
    if missing:
        raise HarnessError(f"compose: no score for weighted dimension(s) {missing}")
    rows: list[dict[str, Any]] = []
    total = 0.0
    for name in sorted(weights):
        value = float(dimensions[name])
        product = weights[name] * value
        total += product
        rows.append({"term": name, "weight": weights[name], "value": value, "product": product})
    return Composed(total=min(1.0, max(0.0, total)), arithmetic=rows)


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0
