"""Case formats: case.yaml, the public contract, provenance, and the sealed grading file."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

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


class Viewport(Strict):
    name: Id
    width: int = Field(ge=1, le=4096)
    height: int = Field(ge=1, le=4096)


class State(Strict):
    """A named state reached from a route; the default state has no steps."""

    name: Id
    steps: list[dict[str, str]] = Field(default_factory=list)


class BuildStep(Strict):
    """How a workspace turns into the output folder that is rendered."""

    command: list[str] = Field(default_factory=list)
    output: str = Field(min_length=1)

    @field_validator("output")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith("/") or ".." in value.split("/"):
            raise ValueError("must be a relative path inside the workspace")
        return value


class Contract(Versioned):
    """public/contract.yaml: the finite route × viewport × state matrix."""

    routes: list[str] = Field(min_length=1)
    viewports: list[Viewport] = Field(min_length=1)
    states: list[State] = Field(default_factory=lambda: [State(name="default")])
    build: BuildStep

    @field_validator("routes")
    @classmethod
    def _routes(cls, value: list[str]) -> list[str]:
        for route in value:
            if not route.startswith("/"):
                raise ValueError(f"route {route!r} must start with '/'")
        return value

    @model_validator(mode="after")
    def _unique(self) -> Contract:
        for label, names in (
            ("viewports", [v.name for v in self.viewports]),
            ("states", [s.name for s in self.states]),
        ):
            if len(set(names)) != len(names):
                raise ValueError(f"{label}: names must be unique, got {names}")
        return self


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
