"""Judged captures re-scored at other thresholds, by the real grader, with a cache.

A threshold reaches only some dimensions (:data:`recon.grade.attempt.REACHED_BY`:
regional visual, responsive, preservation), and those are attempt-level scores, so a
capture's re-scored dimensions are its attempt's. :class:`Regrader` re-grades an attempt's
reached dimensions with :func:`recon.grade.attempt.thresholded` from what its grade cell
read (:class:`Source`: no re-rendering) and remembers each dimension by the values of
the thresholds that reach it, so a setting that moves only ``overflow_tolerance_px``
re-scores only responsive, and a value tried twice is scored once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from recon.calibrate.scores import Shot
from recon.grade.attempt import REACHED_BY, Build, thresholded
from recon.grade.compose import clamp
from recon.model.grading import Grading, Thresholds

Setting = Mapping[str, float | None]
"""Threshold name -> a value for every case, or None: each case's own (``grading.yaml``)."""


@dataclass(frozen=True)
class Source:
    """What one attempt's grade read, as the grader's values."""

    grading: Grading  # the case's sealed grading (its own thresholds)
    candidate: Build
    reference: Build
    starter: Build
    visual_rows: Sequence[Mapping[str, Any]]  # global visual's per-point rows of its grade


def thresholds_of(own: Thresholds, setting: Setting) -> Thresholds:
    """A case's thresholds under ``setting`` (None keeps the case's own value)."""
    update = {name: value for name, value in setting.items() if value is not None}
    return Thresholds.model_validate(own.model_dump() | update)


@dataclass
class Regrader:
    """Re-scores attempts (by name) at a threshold setting; ``runs`` counts the grader's
    calls (one attempt at one setting, only its dimensions not yet remembered)."""

    sources: Mapping[str, Source]
    runs: int = 0
    _seen: dict[tuple[str, str, tuple[float, ...]], float] = field(default_factory=dict)

    def dimensions(self, attempt: str, setting: Setting) -> dict[str, float]:
        source = self.sources[attempt]
        thresholds = thresholds_of(source.grading.thresholds, setting)
        keys = {
            dim: (attempt, dim, tuple(float(getattr(thresholds, t)) for t in reads))
            for dim, reads in REACHED_BY.items()
        }
        missing = [dim for dim, key in keys.items() if key not in self._seen]
        if missing:
            self.runs += 1
            grading = source.grading.model_copy(update={"thresholds": thresholds})
            scored = thresholded(
                grading,
                source.candidate,
                source.reference,
                source.starter,
                source.visual_rows,
                missing,
            )
            for dim, result in scored.items():
                self._seen[keys[dim]] = clamp(float(result.score), f"dimension {dim}")
        return {dim: self._seen[key] for dim, key in keys.items()}

    def shot(self, shot: Shot, setting: Setting) -> Shot:
        """``shot`` with its reached dimensions re-scored at ``setting``."""
        return replace(
            shot, dimensions={**shot.dimensions, **self.dimensions(shot.attempt, setting)}
        )
