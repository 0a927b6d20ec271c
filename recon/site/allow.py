"""The one allow-list of what the site exports (DESIGN §5.3).

Templates never see a model: they get plain data made by :func:`public`, which keeps of
each record exactly the fields :data:`EXPORTED` names for its class and refuses any class
it does not name (fail closed). So a field added to a record later reaches no page until
it is listed here, and nothing sealed can ride along inside a public record.

What is listed: scores with their standard errors, intervals and bands; each attempt's
dimension values with their allow-listed public terms (:data:`recon.model.PUBLIC_TERMS`),
its checks as pass/fail with a public label, digests and counts; of a gateway attempt, what
its model used (calls, turns, tool calls, tokens by kind, cost, the price table's digest)
and its transcript without timings (:mod:`recon.site.transcript`); each entry's pinned
record; reliability and withdrawals; of a case, its identity and the attribution part of
its provenance (who published the material, under which licence, which package version):
never the provenance's artifact list (sealed paths and digests) nor its notes.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from recon.errors import HarnessError
from recon.model.case import Case, Package, Provenance
from recon.model.entry import Budget, ModelPin, Sandbox
from recon.model.gateway import GatewayOutcome, Usage
from recon.model.records import Egress, ModelUse, Trace
from recon.model.result import (
    AgentPin,
    AttemptSummary,
    CaseScore,
    DimensionSummary,
    EntryRecord,
    EntryResult,
    Estimate,
    PublicCheck,
    ReleaseResult,
    Reliability,
    ReliabilityReport,
    Uncertainty,
    Withdrawn,
)
from recon.model.transcript import Body, ToolUse, Transcript, Turn

EXPORTED: Mapping[type[BaseModel], tuple[str, ...]] = MappingProxyType(
    {
        ReleaseResult: (
            "release", "title", "protocol", "formal", "formal_note", "aggregation",
            "active_cases", "entries", "attempts", "reliability", "uncertainty", "withdrawals",
        ),
        EntryResult: (
            "entry", "model", "agent", "rank", "ranked", "score", "se", "ci", "band",
            "covered", "cases", "dimensions", "record",
        ),
        CaseScore: ("case", "attempts", "valid", "mean", "se", "ci", "per_attempt"),
        Estimate: ("mean", "se", "ci"),
        EntryRecord: (
            "model", "agent", "reasoning_effort", "tool_profile", "skill_digest", "runtime",
            "evidence_condition", "sandbox", "budget", "digest",
        ),
        ModelPin: ("provider", "name", "version"),
        AgentPin: ("name", "version"),
        Sandbox: ("backend", "egress"),
        Budget: (
            "cpus", "memory_mb", "pids", "wall_s", "disk_mb", "output_mb", "output_files",
            "output_depth",
        ),
        ReliabilityReport: ("overall", "entries", "cases"),
        Reliability: (
            "attempts", "by_outcome", "rates", "tries", "retries", "harness_failures",
            "harness_failure_rate", "withdrawn",
        ),
        Withdrawn: (
            "attempt", "entry", "case", "automatic", "applies", "reason", "by", "at",
            "record", "sidecar", "recorded_outcome", "effect",
        ),
        Uncertainty: ("method", "level", "seed", "resamples"),
        AttemptSummary: (
            "id", "entry", "case", "index", "outcome", "reason", "formal", "total",
            "dimensions", "trace", "record", "tries", "retry_of", "egress", "checks",
            "model_use", "agent_trace",
        ),
        DimensionSummary: ("value", "terms"),
        Trace: ("turns", "tool_calls", "tokens", "cost_usd"),
        ModelUse: ("calls", "turns", "tool_calls", "tokens", "usage", "cost_usd", "prices"),
        Usage: ("input", "output", "cache_read", "cache_write", "reasoning"),
        Transcript: (
            "upstream", "prices_digest", "usage", "cost_usd", "outcome", "turns", "turns_left_out",
        ),
        Turn: (
            "turn", "protocol", "endpoint", "model", "stream", "status", "sent", "text", "calls",
            "calls_left_out", "usage", "cost_usd", "refused",
        ),
        ToolUse: ("name", "arguments", "result"),
        Body: ("text", "chars"),
        GatewayOutcome: ("kind", "reason"),
        Egress: ("allowed", "refused", "failed"),
        PublicCheck: ("dimension", "label", "passed", "group", "kept", "screenshot"),
        Case: ("id", "version", "title", "track", "evidence_conditions"),
        Provenance: ("publisher", "package", "version", "registry", "license", "packages"),
        Package: ("package", "version", "registry", "license"),
    }
)  # fmt: skip
"""Record class -> the only fields of it a page may show."""


def public(value: Any) -> Any:
    """``value`` as plain data holding allow-listed fields only (tuples become lists)."""
    if isinstance(value, BaseModel):
        fields = EXPORTED.get(type(value))
        if fields is None:
            raise HarnessError(
                f"site: {type(value).__name__} is not in the export allow-list "
                "(recon/site/allow.py); list the fields a page may show, or leave it out"
            )
        return {name: public(getattr(value, name)) for name in fields}
    if isinstance(value, Mapping):
        return {str(k): public(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [public(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise HarnessError(f"site: a {type(value).__name__} cannot be exported; export plain data")
