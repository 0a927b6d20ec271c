"""entries/<id>.yaml: a model evaluated through a named agent under a pinned configuration."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from recon.model.base import Strict, Versioned
from recon.model.case import Id


class ModelPin(Strict):
    provider: str
    name: str
    version: str


class Agent(Strict):
    """The agent and how to run it.

    ``command`` placeholders: ``{workspace}``, ``{brief}``, ``{evidence}``, ``{entry_dir}``.
    ``files`` (relative to entries/) are hashed into the entry digest, so changing a
    scripted agent re-runs its attempts. ``env`` names variables forwarded by name only.
    """

    name: str
    version: str
    command: list[str] = Field(min_length=1)
    files: list[str] = Field(default_factory=list)
    env: list[str] = Field(default_factory=list)


class Sandbox(Strict):
    """``egress``: the model-API hosts the attempt may reach through the egress proxy,
    ``host`` (port 443) or ``host:port``; everything else is refused and counted."""

    backend: Literal["native", "docker"]
    image: str
    egress: list[str] = Field(default_factory=list)

    @field_validator("egress")
    @classmethod
    def _egress(cls, value: list[str]) -> list[str]:
        from recon.sandbox.proxy import parse_allow  # import here: sandbox imports model

        parse_allow(value)
        return value


class Budget(Strict):
    cpus: float = Field(gt=0, le=64)
    memory_mb: int = Field(ge=64)
    pids: int = Field(ge=16)
    wall_s: int = Field(ge=1)
    disk_mb: int = Field(ge=1)
    output_mb: int = Field(ge=1)


class Entry(Versioned):
    id: Id
    model: ModelPin
    agent: Agent
    reasoning_effort: str
    tool_profile: str
    skill_digest: str | None = None
    runtime: dict[str, str] = Field(default_factory=dict)
    evidence_condition: Literal["full", "brief-only"] = "full"
    sandbox: Sandbox
    budget: Budget
