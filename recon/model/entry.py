"""entries/<id>.yaml: a model evaluated through a named agent under a pinned configuration."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from recon.model.base import Strict, Versioned
from recon.model.case import Id
from recon.model.egress import parse_allow


class ModelPin(Strict):
    provider: str
    name: str
    version: str


class Agent(Strict):
    """The agent and how to run it (``recon.agents.CommandAdapter`` reads this).

    ``command`` and ``install`` placeholders: ``{workspace}``, ``{brief}``, ``{evidence}``,
    ``{entry_dir}``, ``{python}``, and on docker ``{trace}`` (a file for the agent's
    trajectory). ``install`` runs just before the agent, in the sandbox, from the offline
    store only. ``files`` (relative to entries/) are hashed into the entry digest, so
    changing a scripted agent re-runs its attempts. ``env`` names host variables forwarded
    by name only (their values are never written anywhere); ``credentials`` are those of them
    the agent cannot run without: when one is unset the attempt is a harness failure
    ("credentials missing") before any container starts. ``set_env`` holds fixed, non-secret
    values. ``trace`` names the parser of turns, tool calls and tokens.
    """

    name: str
    version: str
    command: list[str] = Field(min_length=1)
    install: list[str] = Field(default_factory=list)
    files: list[str] = Field(default_factory=list)
    env: list[str] = Field(default_factory=list)
    credentials: list[str] = Field(default_factory=list)
    set_env: dict[str, str] = Field(default_factory=dict)
    trace: Literal["lines", "mini-swe-agent"] = "lines"

    @model_validator(mode="after")
    def _credentials_are_forwarded(self) -> Agent:
        unknown = sorted(set(self.credentials) - set(self.env))
        if unknown:
            raise ValueError(f"credentials {unknown} must also be listed in agent.env")
        clash = sorted(set(self.set_env) & set(self.env))
        if clash:
            raise ValueError(f"{clash} are both forwarded (env) and fixed (set_env); pick one")
        return self

    @model_serializer(mode="wrap")
    def _omit_unset_additions(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Fields added after the first entries are left out at their defaults, so that the
        digests (and attempt keys) of entries that do not use them stay as they were."""
        data: dict[str, Any] = handler(self)
        for name in _ADDED:
            if data.get(name) == Agent.model_fields[name].get_default(call_default_factory=True):
                data.pop(name, None)
        return data


_ADDED = ("install", "credentials", "set_env", "trace")


class Sandbox(Strict):
    """``egress``: the model-API hosts the attempt may reach through the egress proxy,
    ``host`` (port 443) or ``host:port``; everything else is refused and counted."""

    backend: Literal["native", "docker"]
    image: str
    egress: list[str] = Field(default_factory=list)

    @field_validator("egress")
    @classmethod
    def _egress(cls, value: list[str]) -> list[str]:
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
