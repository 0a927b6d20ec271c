"""A preference study's judgement file (issue 28): ``<study>/judgments.jsonl``.

:class:`StudyJudgement` is one line: which of two reconstructions (methods ``a`` and
``b``) of page ``page`` each of two blind raters found closer to the original, and their
consensus. ``recon.calibrate.study`` reads it and turns it into preference rows
(:class:`~recon.model.Judgement`).

This module is imported only by the study reader, never by ``recon.model``'s face (so it
is not in ``SCHEMAS``): a format that only the bench reads must not re-key any cell of any
release.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from recon.model.base import Versioned

StudyName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")]
"""A study's page folder or method (file stem) name: no path separator, no leading dot."""
StudyChoice = Literal["a", "b", "tie"]
Consensus = Literal["a", "b", "tie", "disagree"]


class StudyJudgement(Versioned):
    """One line of a study's ``judgments.jsonl``: which of two reconstructions (methods
    ``a`` and ``b``) of page ``page`` each of two blind raters found closer to the
    original, and their consensus (``disagree`` when they differ)."""

    page: StudyName
    a: StudyName
    b: StudyName
    rater_1: StudyChoice
    rater_2: StudyChoice
    consensus: Consensus

    @model_validator(mode="after")
    def _consistent(self) -> StudyJudgement:
        if self.a == self.b:
            raise ValueError("a and b are the same method; a judgement compares two")
        if "original" in (self.a, self.b):
            raise ValueError("a and b must be reconstructions, not the original")
        agreed = self.rater_1 if self.rater_1 == self.rater_2 else "disagree"
        if self.consensus != agreed:
            raise ValueError(
                f"consensus is {self.consensus!r} but the raters say {self.rater_1!r} and "
                f"{self.rater_2!r} (consensus {agreed!r}); fix the consensus or a rater"
            )
        return self
