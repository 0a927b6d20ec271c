"""``releases/calibrations/<id>.yaml``: fitted dimension weights and thresholds (issue 15),
and global visual's fit on a study of real reconstructions (issue 28).

Sealed like a case's ``grading.yaml`` weights and thresholds: never copied into a
workspace, a page or the site. A release names one (``calibration: <id>``); its grade cells
then combine the dimensions with these weights instead of each case's sealed ones and
grade with these thresholds where the calibration gives one (a threshold it leaves out is
each case's own), the calibration file's digest is an input of every grade cell, and the
manifest records it (``inputs.calibration``). The report keeps how well the fit agrees
with the preferences it came from, and what each candidate threshold value scored.

A calibration may instead (or as well) hold ``visual``: the weights of global visual's
terms and its guard's floors, fitted by ``recon calibrate fit --study`` on people's
judgements of real reconstructions; the grade cells then score global visual (the
capture rows, responsive's per-viewport rows and workflow checkpoints) with them.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator, model_validator

from recon.model.base import Strict, Versioned
from recon.model.grading import (
    Dimension,
    Grading,
    Pixels,
    ThresholdName,
    Thresholds,
    VisualWeights,
    written_out,
)
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


class FittedThresholds(Strict):
    """Thresholds the fit chose, within :class:`~recon.model.grading.Thresholds`' bounds; a
    field left out (the fit kept each case's own value) is each case's ``grading.yaml``."""

    text_similarity: Share | None = None
    position_tolerance_px: Pixels | None = None
    overflow_tolerance_px: Pixels | None = None
    region_pass: Share | None = None

    def applied(self, own: Thresholds) -> Thresholds:
        """A case's thresholds with the fitted ones in place of its own."""
        return own.model_copy(update=self.model_dump(exclude_none=True))


class ThresholdTrial(Strict):
    """One candidate value of a threshold: the held-out fit of the preferences with every
    judged capture re-scored at it."""

    value: float | None = None  # None: each case's own value
    log_loss: float = Field(ge=0)
    agreement: float = Field(ge=0, le=1)
    tied: bool = False  # within one paired standard error of the best: a tie


class ThresholdReport(Strict):
    """How one threshold was chosen: its grid, the value each case's grades used, every
    candidate's held-out log-loss and agreement (the last sweep's) and the chosen value."""

    grid: list[float]
    current: dict[str, float]  # case -> the value the release's grades used
    trials: list[ThresholdTrial]
    chosen: float | None = None  # None: each case's own value


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
    thresholds: dict[ThresholdName, ThresholdReport] = Field(default_factory=dict)  # {}: not fitted
    sweeps: int = Field(default=0, ge=0)  # coordinate-search sweeps over the thresholds
    rescorings: int = Field(default=0, ge=0)  # attempts re-graded at a candidate threshold


class PathFit(Strict):
    """One path of global visual on a study: how its score agreed with the consensus
    before (the metric's own fit), in-sample and held out (k folds split by page, the
    weights refitted on the other folds), and the fit's weights."""

    before: Agreement
    in_sample: Agreement
    held_out: Agreement
    folds: list[dict[str, float]]  # each fold's weights
    l2: float = Field(ge=0)  # the final fit's L2 penalty, chosen on the folds


class VisualFit(Strict):
    """Global visual's fit on a study of real reconstructions (``recon calibrate fit
    --study``): the weights and floors, what it was fitted on and how well it agrees."""

    method: str = Field(max_length=200)
    study: dict[str, str]  # file under the study folder -> blake3 digest
    renderer: str  # the capture code digest the pages were rendered with
    viewport: str  # WIDTHxHEIGHT
    pairs: int = Field(ge=0)  # consensus pairs: ties and disagreements left out
    weights: VisualWeights
    paths: dict[str, PathFit]  # content, image
    floors: list[dict[str, float]] = Field(default_factory=list)  # each fold's guard floors


class Calibration(Versioned):
    """A fitted calibration: dimension weights (summing to 1) with their report, the
    thresholds it fitted (each optional), and global visual's fit; at least one of the
    weights and the visual fit."""

    id: Id
    release: Id | None = None  # the release whose captures the judgements compared
    method: str = Field(max_length=200)
    preferences: dict[str, str] = Field(default_factory=dict)  # file name -> blake3 digest
    weights: dict[Dimension, Share] | None = None  # None: each case's own
    thresholds: FittedThresholds = Field(default_factory=FittedThresholds)
    report: FitReport | None = None  # the weights' and thresholds' fit
    visual: VisualFit | None = None  # None: the metric's own

    @field_validator("weights")
    @classmethod
    def _sum_to_one(cls, value: dict[str, float] | None) -> dict[str, float] | None:
        # every dimension written out (a left-out one would drop out of every total silently);
        # fitted weights are rounded to 6 decimals
        return None if value is None else summing_to_one(written_out(value), 1e-6)

    @model_validator(mode="after")
    def _something(self) -> Calibration:
        if self.weights is None and self.visual is None:
            raise ValueError("neither weights nor visual: a calibration must fit one of them")
        if (self.weights is None) != (self.report is None):
            raise ValueError("weights and report come together: the report is their fit's")
        return self

    def applied(self, grading: Grading) -> Grading:
        """A case's sealed grading as a release naming this calibration grades with it:
        these weights, these thresholds where given, and this global visual fit."""
        update: dict[str, object] = {"thresholds": self.thresholds.applied(grading.thresholds)}
        if self.weights is not None:
            update["weights"] = self.weights
        if self.visual is not None:
            update["visual"] = self.visual.weights
        return grading.model_copy(update=update)
