"""Case formats: case.yaml, provenance, and the sealed grading file (contract: contract.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from recon.model.base import Strict, Versioned

Id = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)]
Digest = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Condition = Literal["full", "brief-only"]
_FULL: Condition = "full"


class Case(Versioned):
    """cases/<id>/case.yaml: identity and version of a task package."""

    id: Id
    version: int = Field(ge=1)
    title: str
    track: Literal["frozen-evidence/reconstruct"] = "frozen-evidence/reconstruct"
    active: bool = True
    evidence_conditions: list[Condition] = Field(default_factory=lambda: [_FULL])


class Artifact(Strict):
    """One authoritative file pinned by provenance."""

    path: str
    source: str
    blake3: Digest


class Provenance(Versioned):
    """provenance.yaml: where the authoritative artifact came from, pinned."""

    publisher: str
    package: str
    version: str
    registry: str
    tarball_integrity: str
    license: str
    artifacts: list[Artifact] = Field(min_length=1)
    notes: str = ""


class Assertion(Strict):
    """A sealed functional check: a locator plus an expectation."""

    id: Id
    locator: dict[str, str]
    expect: Literal["visible", "count", "text"]
    value: str | int | None = None
    weight: float = Field(gt=0)

    @field_validator("locator")
    @classmethod
    def _locator(cls, value: dict[str, str]) -> dict[str, str]:
        keys = set(value)
        allowed = [{"role"}, {"role", "name"}, {"text"}, {"test_id"}, {"css"}]
        if keys not in allowed:
            raise ValueError("use one of {role[, name]}, {text}, {test_id}, {css}")
        return value


Dimension = Literal["global_visual", "functional"]


class Grading(Versioned):
    """sealed/grading.yaml: checks and per-dimension weights, never shown to a Candidate."""

    assertions: list[Assertion] = Field(default_factory=list)
    weights: dict[Dimension, float]

    @field_validator("weights")
    @classmethod
    def _sum_to_one(cls, value: dict[str, float]) -> dict[str, float]:
        total = sum(value.values())
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"weights must sum to 1, they sum to {total:g}")
        return value
