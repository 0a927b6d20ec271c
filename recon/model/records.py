"""Records the pipeline writes: attempts, cells (action cache), pointers, release JSON, manifest."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from recon.model.base import Strict, Versioned
from recon.model.case import Digest
from recon.model.grading import Dimension
from recon.model.public import PUBLIC_TERMS

Outcome = Literal["valid", "missing", "ungradeable", "timeout", "harness_failure", "withdrawn"]
CellKind = Literal[
    "evidence",
    "workspace",
    "image",
    "attempt",
    "oracle",
    "capture",
    "probe",
    "grade",
    "aggregate",
    "site",
    "manifest",
]


class Ref(Strict):
    """An output of a cell: a stored blob or tree."""

    digest: Digest
    type: Literal["blob", "tree"] = "blob"


class Trace(Strict):
    turns: int | None = None
    tool_calls: int | None = None
    tokens: int | None = None


class Egress(Strict):
    """What the egress proxy saw during an attempt (policy evidence)."""

    allowed: int = 0
    refused: int = 0
    failed: int = 0  # admitted by the allow-list, but the upstream did not answer


class AttemptRecord(Versioned):
    """One production run of one entry on one case: what it produced. Immutable.

    How long it ran and what it logged are run metadata (:class:`RunRecord`), kept apart
    so that the record, and every key and manifest that names it, depends on content only.
    """

    SCHEMA_VERSION: ClassVar[int] = 2
    MIGRATES_FROM: ClassVar[tuple[int, ...]] = (1,)
    schema_version: int = 2

    @model_validator(mode="before")
    @classmethod
    def _from_v1(cls, data: Any) -> Any:
        """Version 1 held the run metadata too: drop it (a v1 record's run stays in its blob)."""
        if isinstance(data, dict) and data.get("schema_version", 1) == 1:
            data = {k: v for k, v in data.items() if k not in ("duration_s", "logs", "image_id")}
            egress = data.get("egress")
            if isinstance(egress, dict):
                data["egress"] = {k: v for k, v in egress.items() if k != "events"}
            data["schema_version"] = 2
        return data

    entry: str
    case: str
    index: int
    protocol: str
    backend: Literal["native", "docker"]
    formal: bool
    outcome: Outcome
    reason: str
    exit_code: int | None = None
    image: Digest  # the image cell's output: the sandbox recipe
    trace: Trace = Field(default_factory=Trace)
    refusals: list[str] = Field(default_factory=list)  # output files refused, with reasons
    egress: Egress = Field(default_factory=Egress)
    try_index: int = Field(default=0, ge=0)  # 0: the first try; n: the n-th harness retry
    retry_of: Digest | None = None  # the record of the harness-failed try this one replaces


class RunRecord(Versioned):
    """Run metadata of one attempt: never part of a key or of a release manifest."""

    duration_s: float
    logs: Digest  # blob: the agent's and the build step's output, secrets scrubbed
    image_id: str | None = None  # the engine's image id (docker)
    egress_events: Digest | None = None  # blob: the proxy's event log (JSON)


class CellRecord(Versioned):
    """The action-cache record of one finished cell."""

    kind: CellKind
    name: str
    key: Digest
    inputs: dict[str, str]
    outputs: dict[str, Ref]
    duration_s: float
    timings: dict[str, float] = Field(default_factory=dict)


class Pointer(Versioned):
    """The doit target of a cell: its key and output digests (the outputs live in the store)."""

    kind: CellKind
    name: str
    key: Digest
    outputs: dict[str, Ref]
    retry: bool = False


class ManifestCell(Strict):
    kind: CellKind
    name: str
    key: Digest
    outputs: dict[str, Ref]


class ManifestInputs(Strict):
    cases: dict[str, dict[str, str]]
    entries: dict[str, Digest]
    protocol: Digest
    code: dict[str, Digest]  # per cell kind (recon.pipeline.keys)
    toolchain: dict[str, str]  # chromium, playwright, python, numpy...: what the code ran on


class Manifest(Versioned):
    """releases/<id>/manifest.json: every input and output digest of a release (run
    metadata apart: that is ``runs.json``, see :class:`Runs`)."""

    SCHEMA_VERSION: ClassVar[int] = 2
    schema_version: int = 2

    release: str
    inputs: ManifestInputs
    cells: list[ManifestCell]
    release_json: Digest
    site: Digest


class Runs(Versioned):
    """releases/<id>/runs.json: the run metadata of a release's attempts (durations, logs),
    as of its last export. It differs between two builds of the same inputs; nothing is
    keyed on it."""

    release: str
    attempts: dict[str, Digest]  # attempt cell name -> its RunRecord blob


class CaseScore(Strict):
    case: str
    attempts: dict[str, int]
    valid: int
    mean: float | None
    per_attempt: list[float | None]


class EntryResult(Strict):
    entry: str
    model: str
    agent: str
    rank: int | None
    ranked: bool
    score: float | None
    covered: int
    cases: list[CaseScore]


class Reliability(Strict):
    attempts: int
    by_outcome: dict[str, int]
    harness_failure_rate: float


class DimensionSummary(Strict):
    """One dimension of an attempt as published: its value and its public terms."""

    value: float = Field(ge=0, le=1)
    terms: dict[str, float] = Field(default_factory=dict)


class AttemptSummary(Strict):
    """A public line per attempt: whitelisted numbers and digests only.

    ``dimensions`` holds each dimension's value and the terms ``PUBLIC_TERMS`` allows for
    it; a weight, a weighted sum, a penalty or a product cannot be carried, so neither the
    release JSON nor the site (whose exporter reads only this) can publish one.
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


def _from_v1(data: Any) -> Any:
    """Release JSON v1 published each dimension as a bare value plus the arithmetic of the
    total (``product`` per dimension, from which the sealed weight follows); v2 drops the
    arithmetic and carries values with their public terms."""
    if not isinstance(data, dict) or data.get("schema_version") != 1:
        return data
    attempts = []
    for attempt in data.get("attempts") or []:
        if isinstance(attempt, dict):
            dims = attempt.get("dimensions") or {}
            attempt = {k: v for k, v in attempt.items() if k != "arithmetic"}
            attempt["dimensions"] = {name: {"value": value} for name, value in dims.items()}
        attempts.append(attempt)
    return {**data, "schema_version": 2, "attempts": attempts}


class ReleaseResult(Versioned):
    """releases/<id>/release.json: the scored result of a release (v1 files are read too)."""

    SCHEMA_VERSION: ClassVar[int] = 2
    MIGRATES_FROM: ClassVar[tuple[int, ...]] = (1,)
    schema_version: int = 2
    release: str
    title: str
    protocol: str
    formal: bool
    formal_note: str
    aggregation: str
    active_cases: list[str]
    entries: list[EntryResult]
    attempts: list[AttemptSummary]
    reliability: Reliability

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        return _from_v1(data)
