"""What every dimension's metric returns (``recon.grade.attempt`` stores all of it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MetricResult:
    """The score in [0, 1], one row per thing checked, every term of the arithmetic, and
    the metric's version (which names its formula). Each metric subclasses it only to
    default ``version`` to its own."""

    score: float
    rows: list[dict[str, Any]]
    terms: dict[str, float]
    version: str
