"""``releases/calibrations/<id>.yaml``: a fitted set of dimension weights (issue 15).

Sealed like a case's ``grading.yaml`` weights: never copied into a workspace, a page or the
site. A release names one (``calibration: <id>``); its grade cells then combine the
dimensions with these weights instead of each case's sealed ones, the calibration file's
digest is an input of every grade cell, and the manifest records it (``inputs.calibration``).
The report keeps how well the fit agrees with the preferences it came from.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator

from recon.model.base import Strict, Versioned
from recon.model.grading import Dimension
from recon.model.values import Id, Share, summing_to_one

FOLDER = Path("releases") / "calibrations"


def path_of(root: Path, calibration: str) -> Path:
    """Where calibration ``calibration`` of the project at ``root`` lives."""
    return root / FOLDER / f"{calibration}.yaml"


class Agreement(Strict):
    """Pairwise agreement with the decisive judgements and its bootstrap 95% interval."""

    agreement: float = Field(ge=0, le=1)
    low: float = Field(ge=0, le=1)
    high: float = Field(ge=0, le=1)
    judgements: int = Field(ge=0)


class RaterReport(Strict):
    rater: str
    judgements: int = Field(ge=0)
    repeats: int = Field(ge=0)
    consistency: float | None = Field(default=None, ge=0, le=1)
    both_bad: float = Field(ge=0, le=1)
    flagged: bool = False


class FitReport(Strict):
    """What the fit saw and how well it agrees, before (each dimension, each metric term,
    the current composite) and after (the fitted composite, held out)."""

    judgements: int = Field(ge=0)
    decisive: int = Field(ge=0)
    ties: int = Field(ge=0)
    both_bad: int = Field(ge=0)
    folds: int = Field(ge=2)
    l2: float = Field(ge=0)
    scale: float = Field(ge=0)  # the fitted coefficients' sum: how sharply scores decide
    dimensions: dict[Dimension, Agreement]
    terms: dict[str, Agreement] = Field(default_factory=dict)
    current: Agreement  # the composite with the weights the release's grades used
    fitted: Agreement  # the fitted composite on held-out judgements (k-fold)
    raters: list[RaterReport] = Field(default_factory=list)


class Calibration(Versioned):
    """A fitted calibration: dimension weights (summing to 1) and its report."""

    id: Id
    release: Id | None = None  # the release whose captures the judgements compared
    method: str = Field(max_length=200)
    preferences: dict[str, str] = Field(default_factory=dict)  # file name -> blake3 digest
    weights: dict[Dimension, Share]
    report: FitReport

    @field_validator("weights")
    @classmethod
    def _sum_to_one(cls, value: dict[str, float]) -> dict[str, float]:
        return summing_to_one(value, 1e-6)  # fitted weights are rounded to 6 decimals
