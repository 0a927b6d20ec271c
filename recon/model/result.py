"""releases/<id>/release.json: the scored result of a release (DESIGN §7).

Public by construction: scores with their standard errors and bootstrap intervals, each
attempt's dimension values and allow-listed terms (never a weight or a weight × value
product), reliability counts, withdrawals with their effect on every denominator, and each
entry's complete record with its digest.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from recon.model.base import Strict, Versioned, omit_none
from recon.model.case import Digest
from recon.model.entry import Budget, ModelPin, Sandbox
from recon.model.grading import Dimension
from recon.model.public import PUBLIC_TERMS
from recon.model.records import Egress, ModelUse, Outcome, Trace

Interval = tuple[float, float]
"""A 95% bootstrap interval: (low, high)."""


class CaseScore(Strict):
    """One entry on one case: the mean of its valid repeats, with their standard error and
    bootstrap interval. ``attempts`` counts the case's attempts by outcome (a withdrawn
    attempt counts as ``withdrawn``)."""

    case: str
    attempts: dict[str, int]
    valid: int
    mean: float | None
    se: float | None = None  # sample standard deviation of the repeats / sqrt(valid); 2+ valid
    ci: Interval | None = None
    per_attempt: list[float | None]


class Estimate(Strict):
    """A mean with its standard error (None below two cases) and bootstrap interval."""

    mean: float
    se: float | None
    ci: Interval


class AgentPin(Strict):
    name: str
    version: str


class EntryRecord(Strict):
    """The complete record of an entry: everything that defines what was evaluated.
    ``skill_digest`` is the digest of the skill and prompt files the agent is given
    (``agent.skills``); ``digest`` is the entry digest attempts carry (this record's file and
    every file it names)."""

    model: ModelPin
    agent: AgentPin
    reasoning_effort: str
    tool_profile: str
    skill_digest: Digest | None
    runtime: dict[str, str]
    evidence_condition: str
    sandbox: Sandbox
    budget: Budget
    digest: Digest


class EntryResult(Strict):
    """One entry: its case-mean score (ranked entries only), standard error, interval, the
    rank band of the entries its interval is tied with, and per-dimension means."""

    entry: str
    model: str
    agent: str
    rank: int | None
    ranked: bool
    score: float | None
    covered: int
    cases: list[CaseScore]
    se: float | None = None
    ci: Interval | None = None
    band: tuple[int, int] | None = None  # (first, last) rank of its statistical tie band
    dimensions: dict[Dimension, Estimate] = Field(default_factory=dict)
    record: EntryRecord | None = None  # None only in a release JSON older than version 3


class Reliability(Strict):
    """Attempts by outcome and the tries they took. Withdrawn attempts are in no count but
    ``withdrawn``. ``harness_failure_rate`` is over every try (None without one)."""

    attempts: int
    by_outcome: dict[str, int]
    rates: dict[str, float] = Field(default_factory=dict)  # by_outcome / attempts
    tries: int = 0
    retries: int = 0  # tries - attempts
    harness_failures: int = 0  # tries that ended in a harness failure, retried or final
    harness_failure_rate: float | None
    withdrawn: int = 0


class ReliabilityReport(Strict):
    overall: Reliability
    entries: dict[str, Reliability] = Field(default_factory=dict)
    cases: dict[str, Reliability] = Field(default_factory=dict)


class Withdrawn(Strict):
    """One withdrawal as published: who, when, why, its sidecar, and for each denominator
    the count without it and with it (``effect``)."""

    attempt: str
    entry: str
    case: str
    automatic: bool
    applies: bool  # False: the attempt is not in the release, or its record changed since
    reason: str
    by: str
    at: str | None
    record: Digest
    sidecar: Digest
    recorded_outcome: Outcome | None
    effect: dict[str, tuple[int, int]] = Field(default_factory=dict)


class Uncertainty(Strict):
    """How intervals were computed: percentile bootstrap, resampling cases, then repeats
    within each resampled case, from ``seed`` (per entry, case and dimension, a generator
    seeded with ``seed`` and the blake3 of their name)."""

    method: Literal["bootstrap-percentile"] = "bootstrap-percentile"
    level: float = 0.95
    seed: int
    resamples: int


class DimensionSummary(Strict):
    """One dimension of an attempt as published: its value and its public terms."""

    value: float = Field(ge=0, le=1)
    terms: dict[str, float] = Field(default_factory=dict)


class PublicCheck(Strict):
    """One functional assertion or workflow checkpoint as published: its public label
    (:mod:`recon.model.labels`) and whether it passed, never its selector, expected value,
    observed value or weight. A workflow checkpoint names its workflow's label (``group``),
    says for a ``preserve`` checkpoint whether it held after the reload or navigation
    (``kept``), and gives the digest of the Candidate's screenshot there (``screenshot``)."""

    dimension: Literal["functional", "workflow"]
    label: str
    passed: bool
    group: str | None = None
    kept: bool | None = None
    screenshot: Digest | None = None


class AttemptSummary(Strict):
    """A public line per attempt: whitelisted numbers and digests only.

    ``dimensions`` holds each dimension's value and the terms ``PUBLIC_TERMS`` allows for
    it; a weight, a weighted sum, a penalty or a product cannot be carried, so neither the
    release JSON nor the site (whose exporter reads only this) can publish one. ``checks``
    lists its functional and workflow checks as pass/fail with their public labels.

    ``trace`` holds the counts of whoever measured them: the gateway's (``model_use``) for
    an attempt through the model gateway, else the agent's own report. ``agent_trace`` is
    the agent's own report of a gateway attempt, where it made one (its cost, if it
    reported one, is at its own price list).
    """

    id: str
    entry: str
    case: str
    index: int
    outcome: Outcome
    reason: str
    formal: bool
    total: float | None
    dimensions: dict[Dimension, DimensionSummary]
    trace: Trace
    record: Digest
    tries: int = 1
    retry_of: Digest | None = None
    egress: Egress = Field(default_factory=Egress)
    checks: list[PublicCheck] = Field(default_factory=list)
    model_use: ModelUse | None = None
    agent_trace: Trace | None = None

    @model_serializer(mode="wrap")
    def _omit_no_gateway(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Left out without a gateway, so that other attempts' lines stay as they were."""
        return omit_none(handler(self), "model_use", "agent_trace")

    @model_validator(mode="after")
    def _public_terms_only(self) -> AttemptSummary:
        for name, summary in self.dimensions.items():
            sealed = sorted(set(summary.terms) - PUBLIC_TERMS[name])
            if sealed:
                raise ValueError(
                    f"dimensions.{name}.terms: {sealed} are not public terms of {name}; "
                    f"publish only {sorted(PUBLIC_TERMS[name])}"
                )
        return self


def _from_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Release JSON v1 published each dimension as a bare value plus the arithmetic of the
    total (``product`` per dimension, from which the sealed weight follows); v2 drops the
    arithmetic and carries values with their public terms."""
    attempts = []
    for attempt in data.get("attempts") or []:
        if isinstance(attempt, dict):
            dims = attempt.get("dimensions") or {}
            attempt = {k: v for k, v in attempt.items() if k != "arithmetic"}
            attempt["dimensions"] = {name: {"value": value} for name, value in dims.items()}
        attempts.append(attempt)
    return {**data, "schema_version": 2, "attempts": attempts}


def _from_v2(data: dict[str, Any]) -> dict[str, Any]:
    """v2 had one release-wide reliability line, rated over attempts, and no intervals."""
    old = data.get("reliability")
    if isinstance(old, dict) and "overall" not in old:
        by = old.get("by_outcome") or {}
        n = old.get("attempts", 0)
        failed = by.get("harness_failure", 0) if isinstance(by, dict) else 0
        overall = {**old, "tries": n, "harness_failures": failed}
        data = {**data, "reliability": {"overall": overall}}
    return {**data, "schema_version": 3}


def _from_v3(data: dict[str, Any]) -> dict[str, Any]:
    """v3 had no public checks per attempt: they read as none."""
    return {**data, "schema_version": 4}


class ReleaseResult(Versioned):
    """releases/<id>/release.json (versions 1 to 3 are read too)."""

    SCHEMA_VERSION: ClassVar[int] = 4
    MIGRATES_FROM: ClassVar[tuple[int, ...]] = (1, 2, 3)
    schema_version: int = 4
    release: str
    title: str
    protocol: str
    formal: bool
    formal_note: str
    aggregation: str
    active_cases: list[str]
    entries: list[EntryResult]
    attempts: list[AttemptSummary]
    reliability: ReliabilityReport
    uncertainty: Uncertainty | None = None
    withdrawals: list[Withdrawn] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("schema_version") == 1:
            data = _from_v1(data)
        if isinstance(data, dict) and data.get("schema_version") == 2:
            data = _from_v2(data)
        if isinstance(data, dict) and data.get("schema_version") == 3:
            data = _from_v3(data)
        return data
