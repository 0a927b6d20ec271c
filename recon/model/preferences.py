"""Blind preference data (issue 15): the judgements a collection page exports, the sealed
pair key that maps its opaque pair ids back to captures, and the judgement rows a fit reads.

Three formats, one model each:

- :class:`PageJudgement`: one line of the JSONL a collection page exports. It names a pair
  only by its opaque page id (``p0007``); the page holds no capture digest, attempt id or
  entry name (DESIGN §5: nothing of the release's identity reaches the rater).
- :class:`PairKey`: ``pairs.key.json``, written beside the page folder, never inside it:
  each page pair id -> the release, case, matrix point, the left and right capture digests
  and the pair's seed (which decided the left/right order).
- :class:`Judgement`: one line of a preference JSONL (``recon calibrate ingest`` writes it
  from a page export and its key; ``recon calibrate fit`` reads it).
"""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field, model_validator

from recon.model.base import Strict, Versioned
from recon.model.values import Id

Choice = Literal["left", "right", "tie", "both-bad"]
CHOICES: tuple[str, ...] = get_args(Choice)
Digest = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
PairId = Annotated[str, Field(pattern=r"^p[0-9]{4,6}$")]
Rater = Annotated[str, Field(pattern=r"^r[0-9a-f]{8,64}$")]
"""A hashed rater id: ``r`` and hex digits (the page hashes the name a rater types)."""
PointId = Annotated[str, Field(pattern=r"^[A-Za-z0-9._~@+-]{1,200}$")]
Seed = Annotated[int, Field(ge=0, le=2**63 - 1)]
Time = Annotated[str, Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")]
"""An ISO 8601 UTC timestamp (``2026-12-01T16:45:00.123Z``)."""


class PageJudgement(Versioned):
    """One judgement as the collection page exports it."""

    session: Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]
    pair: PairId
    choice: Choice
    rater: Rater
    time: Time


class KeyedPair(Strict):
    """One pair of a collection session: what its opaque page id stands for."""

    case: Id
    point: PointId
    left: Digest
    right: Digest
    seed: Seed
    repeat_of: PairId | None = None  # a duplicate shown again (rater self-consistency)

    @model_validator(mode="after")
    def _two_captures(self) -> KeyedPair:
        if self.left == self.right:
            raise ValueError("left and right are the same capture; a pair shows two")
        return self


class PairKey(Versioned):
    """``pairs.key.json``: sealed; it stays beside the page folder, never inside it."""

    release: Id
    session: Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]
    seed: Seed
    pairs: dict[PairId, KeyedPair]


class Judgement(Versioned):
    """One row of a preference JSONL: one rater's choice between two captures of one
    matrix point of one release."""

    release: Id
    case: Id
    point: PointId
    left: Digest
    right: Digest
    choice: Choice
    rater: Rater
    time: Time
    seed: Seed
    pair: PairId | None = None
    repeat_of: PairId | None = None

    @model_validator(mode="after")
    def _two_captures(self) -> Judgement:
        if self.left == self.right:
            raise ValueError("left and right are the same capture; a judgement compares two")
        return self
