"""entries/<id>.yaml: a model evaluated through a named agent under a pinned configuration."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from recon.model.base import Strict, Versioned
from recon.model.egress import parse_allow
from recon.model.gateway import MODEL_HOSTS, VENDORS
from recon.model.placeholders import DOCKER_ONLY, check_template, placeholders_in
from recon.model.values import Id, RelativePath, check_relative_path

Name = Annotated[str, Field(min_length=1, max_length=128)]
Part = Annotated[str, Field(max_length=16_384), AfterValidator(check_template)]
"""One argument of a command template: its ``{placeholder}``s must be known ones."""

DANGEROUS_ENV = frozenset(
    {
        "PATH",
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONSTARTUP",
        "NODE_OPTIONS",
        "NODE_PATH",
        "BASH_ENV",
        "ENV",
        "SHELLOPTS",
        "PS4",
        "IFS",
        "PERL5LIB",
        "PERL5OPT",
        "RUBYLIB",
        "RUBYOPT",
        "GCONV_PATH",
        "LOCPATH",
        "HOSTALIASES",
    }
)
DANGEROUS_PREFIXES = ("LD_", "DYLD_")
"""Variables that change what a program loads or runs before its own code: never set or
forwarded by an entry (the harness sets PATH itself)."""


def _safe_env_name(name: str) -> str:
    if not _ENV_NAME.match(name):
        raise ValueError(
            f"{name[:60]!r} is not a variable name; use letters, digits and _ "
            "(not starting with a digit)"
        )
    if name in DANGEROUS_ENV or name.startswith(DANGEROUS_PREFIXES):
        raise ValueError(
            f"{name} changes what programs load or run; an entry may not set or forward it "
            "(remove it; the sandbox sets PATH itself)"
        )
    return name


def _no_nul(value: str) -> str:
    if "\0" in value:
        raise ValueError("a value holds a NUL byte, which no environment can carry; remove it")
    return value


_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
EnvName = Annotated[str, AfterValidator(_safe_env_name)]
EnvValue = Annotated[str, Field(max_length=16_384), AfterValidator(_no_nul)]


def _check_file_pattern(value: str) -> str:
    """A normalised path inside entries/, where ``*`` and ``?`` may stand for characters and
    a trailing ``/`` names a whole folder."""
    check_relative_path(value.removesuffix("/").replace("*", "x").replace("?", "x"))
    return value


FilePattern = Annotated[str, AfterValidator(_check_file_pattern)]
BasePath = Annotated[str, Field(max_length=256, pattern=r"^(/[A-Za-z0-9._~-]+)*$")]
"""The path a client's base URL ends in (``/v1``), or nothing."""


class ModelPin(Strict):
    provider: Name
    name: Name
    version: Name


class Agent(Strict):
    """The agent and how to run it (``recon.agents.CommandAdapter`` reads this).

    ``command`` and ``install`` placeholders (``recon.model.placeholders``): ``{workspace}``,
    ``{brief}``, ``{evidence}``, ``{entry_dir}``, ``{python}``, and on docker ``{trace}`` (a
    file for the agent's trajectory); any other ``{name}`` is refused. ``install`` runs just
    before the agent, in the sandbox, from the offline store only. ``files`` (normalised
    paths inside entries/) are hashed into the entry digest, so changing a scripted agent
    re-runs its attempts; an item may use the glob characters ``*`` and ``?``
    (``scripted/answers/*/faithful/``) and an item ending in ``/`` stands for every file
    under that folder. The project expands them when it loads the entry
    (:func:`recon.project.loader.expand_files`), so the loaded entry, its dump and its
    digest name every file. ``env`` names host variables forwarded by name only (their values
    are never written anywhere); ``credentials`` are those of them the agent cannot run
    without: when one is unset the attempt is a harness failure ("credentials missing")
    before any container starts. ``set_env`` holds fixed, non-secret values. Neither may name
    a loader variable (``DANGEROUS_ENV``, ``LD_*``, ``DYLD_*``). ``trace`` names the parser
    of turns, tool calls and tokens.

    ``gateway`` makes the agent reach its model through the attempt's model gateway
    (``recon.gateway``, docker backend): each variable it names is set in the sandbox to the
    gateway's address followed by its path (``{ANTHROPIC_BASE_URL: "", OPENAI_BASE_URL: /v1,
    GOOGLE_GEMINI_BASE_URL: ""}``: the agent's own base-URL settings). Each of
    ``credentials`` then holds the attempt's token in the sandbox, never its host value: the
    gateway reads the real key from the host environment and adds it upstream. So with the
    gateway a credential need not (and should not) be listed in ``env``: it is never
    forwarded.
    """

    name: Name
    version: Name
    command: list[Part] = Field(min_length=1, max_length=64)
    install: list[Part] = Field(default_factory=list, max_length=64)
    files: list[FilePattern] = Field(default_factory=list, max_length=1000)
    env: list[EnvName] = Field(default_factory=list, max_length=64)
    credentials: list[EnvName] = Field(default_factory=list, max_length=64)
    set_env: dict[EnvName, EnvValue] = Field(default_factory=dict, max_length=64)
    trace: Literal["lines", "mini-swe-agent", "claude-code", "codex", "gemini-cli", "aider"] = (
        "lines"
    )
    skills: list[RelativePath] = Field(default_factory=list, max_length=1000)
    """The files of ``files`` that are skill or prompt files given to the agent: their
    digest is the entry's skill digest, published in the release JSON."""
    gateway: dict[EnvName, BasePath] = Field(default_factory=dict, max_length=16)

    def placeholders(self) -> set[str]:
        """The placeholders the command and install templates use."""
        return {name for part in [*self.command, *self.install] for name in placeholders_in(part)}

    @model_validator(mode="after")
    def _credentials_are_forwarded(self) -> Agent:
        if "gateway" in self.model_fields_set and not self.gateway:
            raise ValueError(
                "gateway: names no base-URL variable; name the agent's own "
                '(ANTHROPIC_BASE_URL: "", OPENAI_BASE_URL: /v1, GOOGLE_GEMINI_BASE_URL: "") '
                "or remove the key"
            )
        # Through the gateway a credential is read on the host, never forwarded.
        unknown = sorted(set(self.credentials) - set(self.env)) if not self.gateway else []
        if unknown:
            raise ValueError(f"credentials {unknown} must also be listed in agent.env; add them")
        clash = sorted(set(self.set_env) & set(self.env))
        if clash:
            raise ValueError(f"{clash} are both forwarded (env) and fixed (set_env); pick one")
        twice = sorted({f for f in self.files if self.files.count(f) > 1})
        if twice:
            raise ValueError(f"files: {twice} listed twice; list each file once")
        fixed = sorted(set(self.gateway) & {*self.env, *self.set_env})
        if fixed:
            raise ValueError(
                f"gateway: {fixed} are set to the gateway's address; remove them from "
                "agent.env and agent.set_env"
            )
        unlisted = sorted(set(self.skills) - set(self.files))
        if unlisted:
            raise ValueError(f"skills: {unlisted} must also be listed in agent.files; add them")
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


_LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def _refuse(loc: tuple[str | int, ...], why: str, value: Any) -> None:
    """One validation error at the field ``loc`` (``file: loc: why``)."""
    error = InitErrorDetails(type=PydanticCustomError("entry", why), loc=loc, input=value)
    raise ValidationError.from_exception_data("Entry", [error])


_ADDED = ("install", "credentials", "set_env", "trace", "skills", "gateway")


class Sandbox(Strict):
    """``egress``: the model-API hosts the attempt may reach through the egress proxy,
    ``host`` (port 443) or ``host:port``; everything else is refused and counted. The image
    is not named here: the backend's image cell builds it from its recipe, and the attempt
    key carries the recipe digest."""

    backend: Literal["native", "docker"]
    egress: list[Annotated[str, Field(max_length=300)]] = Field(default_factory=list, max_length=32)

    @field_validator("egress")
    @classmethod
    def _egress(cls, value: list[str]) -> list[str]:
        parse_allow(value)
        return value


class Budget(Strict):
    """``output_files`` caps the files and folders of the build output, ``output_depth``
    how many levels deep a path in it may go; past either the attempt is ``ungradeable``
    with a refusal, and the output is never unpacked or stored. ``tokens`` and
    ``cost_usd`` (US dollars at the pinned prices) cap the model use of an attempt whose
    agent goes through the gateway (``agent.gateway``); absent, there is no cap."""

    cpus: float = Field(gt=0, le=64)
    memory_mb: int = Field(ge=64, le=65_536)
    pids: int = Field(ge=16, le=32_768)
    wall_s: int = Field(ge=1, le=86_400)
    disk_mb: int = Field(ge=1, le=65_536)
    output_mb: int = Field(ge=1, le=4096)
    output_files: int = Field(default=20_000, ge=1, le=1_000_000)
    output_depth: int = Field(default=32, ge=1, le=256)
    tokens: int | None = Field(default=None, ge=1, le=10**12, strict=True)
    cost_usd: float | None = Field(default=None, gt=0, le=1_000_000)

    @field_validator("cost_usd", mode="before")
    @classmethod
    def _a_number(cls, value: Any) -> Any:
        """A number, not a string that looks like one (YAML ``"5"`` or ``5 USD``)."""
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValueError(f"{str(value)[:40]!r} is not a number; write dollars as 2.5")
        return value

    @model_serializer(mode="wrap")
    def _omit_unset_caps(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The output caps and model budgets are left out at their defaults, so that the
        digests (and attempt keys) of entries that do not set them stay as they were."""
        data: dict[str, Any] = handler(self)
        for name in ("output_files", "output_depth", "tokens", "cost_usd"):
            if data.get(name) == Budget.model_fields[name].default:
                data.pop(name, None)
        return data


class Entry(Versioned):
    id: Id
    model: ModelPin
    agent: Agent
    reasoning_effort: Name
    tool_profile: Name
    skill_digest: Name | None = None  # derived from agent.skills, never written by hand
    runtime: dict[Name, Annotated[str, Field(max_length=4096)]] = Field(
        default_factory=dict, max_length=64
    )
    evidence_condition: Literal["full", "brief-only"] = "full"
    sandbox: Sandbox
    budget: Budget

    @field_validator("skill_digest")
    @classmethod
    def _derived(cls, value: str | None) -> None:
        """Kept (always empty) so that entry digests written before skills stay the same."""
        if value is not None:
            raise ValueError(
                "is derived from the skill and prompt files the agent is given; list them in "
                "agent.skills (and agent.files) and remove this key"
            )
        return None

    @model_validator(mode="after")
    def _gateway(self) -> Entry:
        """Model budgets and the gateway go together, on the docker backend, with a model for
        the gateway to reach and no model host the agent could reach around it."""
        budgets = [n for n in ("tokens", "cost_usd") if getattr(self.budget, n) is not None]
        if budgets and not self.agent.gateway:
            raise ValueError(
                f"budget.{budgets[0]} is enforced by the model gateway; name the agent's "
                "base-URL variables in agent.gateway, or remove it"
            )
        if self.agent.gateway:
            self._check_gateway()
        return self

    def _check_gateway(self) -> None:
        if self.sandbox.backend != "docker":
            raise ValueError(
                "agent.gateway: the model gateway is wired into the docker backend only; "
                "use sandbox.backend docker"
            )
        provider = self.model.provider
        if provider not in (*VENDORS, "scripted"):
            known = ", ".join([*VENDORS, "scripted"])
            why = (
                "has no model for the gateway to reach"
                if provider == "none"
                else f"unknown provider {provider!r} for the gateway"
            )
            _refuse(("model", "provider"), f"{why}; use one of {known} (or remove agent.gateway)",
                    provider)  # fmt: skip
        for i, rule in enumerate(parse_allow(self.sandbox.egress)):
            if rule.host in _LOOPBACK:
                why = ("the agent reaches the gateway on the sandbox's own 127.0.0.1; remove "
                       "the host's loopback from the allow-list")  # fmt: skip
            elif rule.host in MODEL_HOSTS:
                why = (f"{rule.host} is a model host: with agent.gateway every model call goes "
                       "through the gateway (metered, budgeted, recorded); remove it")  # fmt: skip
            else:
                continue
            _refuse(("sandbox", "egress", i), why, self.sandbox.egress[i])

    @model_validator(mode="after")
    def _backend_placeholders(self) -> Entry:
        if self.sandbox.backend == "docker":
            return self
        for field in ("command", "install"):
            for i, part in enumerate(getattr(self.agent, field)):
                only = sorted(set(placeholders_in(part)) & DOCKER_ONLY)
                if only:
                    names = ", ".join(f"{{{n}}}" for n in only)
                    why = (
                        f"{names} exists on the docker backend only; use sandbox.backend docker "
                        f"or drop it (backend: {self.sandbox.backend})"
                    )
                    error = InitErrorDetails(
                        type=PydanticCustomError("placeholder", why),
                        loc=("agent", field, i),
                        input=part,
                    )
                    raise ValidationError.from_exception_data(type(self).__name__, [error])
        return self
