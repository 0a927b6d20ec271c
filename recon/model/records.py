"""Records the pipeline writes: attempts, runs, cells (action cache), pointers, manifest.

The release JSON is :mod:`recon.model.result`."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer, model_validator

from recon.model.base import Strict, Versioned, omit_none
from recon.model.case import Digest
from recon.model.gateway import Usage
from recon.model.kinds import CellKind

Outcome = Literal["valid", "missing", "ungradeable", "timeout", "harness_failure", "withdrawn"]


class Ref(Strict):
    """An output of a cell: a stored blob or tree."""

    digest: Digest
    type: Literal["blob", "tree"] = "blob"


class Trace(Strict):
    """Trace counts of one attempt. ``cost_usd`` is a cost the agent reported itself, at its
    own price list (the gateway's metered cost, at the pinned prices, is ``ModelUse``'s);
    left out of the JSON when unknown, so the lines of agents that report none are as
    they were before it was kept."""

    turns: int | None = None
    tool_calls: int | None = None
    tokens: int | None = None
    cost_usd: float | None = Field(default=None, ge=0)

    @model_serializer(mode="wrap")
    def _omit_unknown_cost(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        return omit_none(handler(self), "cost_usd")

    def reported(self) -> bool:
        """Whether the agent reported any count."""
        return any(v is not None for v in (self.turns, self.tool_calls, self.tokens, self.cost_usd))


class Egress(Strict):
    """What the egress proxy saw during an attempt (policy evidence)."""

    allowed: int = 0
    refused: int = 0
    failed: int = 0  # admitted by the allow-list, but the upstream did not answer


class ModelUse(Strict):
    """What an attempt's agent used of its model, metered at its gateway from the API's own
    usage fields: calls, tokens by kind, and their cost at the pinned prices (None: a call's
    model had no price). ``turns`` are the answered calls that generate (``count_tokens``
    calls are not turns), ``tool_calls`` the tool calls in their replies, ``prices`` the
    digest of the price table the cost was computed at (None, all three: a record made
    before they were counted). The recording itself (timings included) is run metadata."""

    calls: int = Field(ge=0)
    usage: Usage
    tokens: int = Field(ge=0)  # Usage.tokens: every billed token
    cost_usd: float | None = None
    turns: int | None = Field(default=None, ge=0)
    tool_calls: int | None = Field(default=None, ge=0)
    prices: str | None = None

    def trace(self) -> Trace:
        """The trace counts the gateway metered."""
        return Trace(turns=self.turns, tool_calls=self.tool_calls, tokens=self.tokens)


class AttemptRecord(Versioned):
    """One production run of one entry on one case: what it produced. Immutable.

    How long it ran and what it logged are run metadata (:class:`RunRecord`), kept apart
    so that the record, and every key and manifest that names it, depends on content only.
    """

    SCHEMA_VERSION: ClassVar[int] = 3
    MIGRATES_FROM: ClassVar[tuple[int, ...]] = (1, 2)
    schema_version: int = 3

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """Version 1 held the run metadata too: drop it (a v1 record's run stays in its blob).
        Versions 1 and 2 did not record the run conditions: they are read as unknown."""
        if isinstance(data, dict) and data.get("schema_version", 1) == 1:
            data = {k: v for k, v in data.items() if k not in ("duration_s", "logs", "image_id")}
            egress = data.get("egress")
            if isinstance(egress, dict):
                data["egress"] = {k: v for k, v in egress.items() if k != "events"}
            data["schema_version"] = 2
        if isinstance(data, dict) and data.get("schema_version") == 2:
            data = {**data, "schema_version": 3}
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
    # The conditions it ran under (None: not recorded, a record older than version 3). An
    # attempt whose conditions differ from its release's is withdrawn automatically.
    protocol_digest: Digest | None = None
    entry_digest: Digest | None = None
    evidence_condition: str | None = None
    model_use: ModelUse | None = None  # an attempt through the model gateway (issue 24)

    @model_serializer(mode="wrap")
    def _omit_no_gateway(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Left out without a gateway, so that other attempts' records stay as they were."""
        return omit_none(handler(self), "model_use")

    def conditions(self) -> dict[str, str | None]:
        """What must equal the release's for the attempt to count (image: the image cell's
        output)."""
        return {
            "protocol": self.protocol,
            "protocol digest": self.protocol_digest,
            "image digest": self.image,
            "entry digest": self.entry_digest,
            "evidence condition": self.evidence_condition,
        }


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
    """What a release was built from. ``sources`` (per kind: its modules and package data)
    and ``tools`` (per kind: the toolchain facts its code digest covers) let ``recon diff``
    tell a code edit from a toolchain change; ``cases.<id>.calibration`` moves with the
    sealed weights and thresholds (salted with the sealed checks, so it reveals nothing
    the grading digest does not)."""

    cases: dict[str, dict[str, str]]
    entries: dict[str, Digest]
    protocol: Digest
    code: dict[str, Digest]  # per cell kind (recon.pipeline.keys)
    toolchain: dict[str, str]  # chromium, playwright, python, numpy...: what the code ran on
    definition: Digest | None = None  # the release definition
    withdrawals: Digest | None = None  # the active withdrawals (releases/<id>.withdrawals.json)
    images: dict[str, Digest] = Field(default_factory=dict)  # backend -> sandbox recipe
    sources: dict[str, Digest] = Field(default_factory=dict)
    tools: dict[str, list[str]] = Field(default_factory=dict)
    calibration: Digest | None = None  # releases/calibrations/<id>.yaml, when one is named

    def flat(self) -> dict[str, str]:
        """Every input as ``path -> digest or fact``: ``cases.home.public``, ``code.grade``,
        ``toolchain.chromium``, ``images.docker``... (``sources`` and ``tools`` are the
        breakdown of ``code`` and are left out)."""
        flat = {"protocol": self.protocol}
        if self.definition is not None:
            flat["definition"] = self.definition
        if self.withdrawals is not None:
            flat["withdrawals"] = self.withdrawals
        if self.calibration is not None:
            flat["calibration"] = self.calibration
        flat.update({f"toolchain.{tool}": v for tool, v in self.toolchain.items()})
        for case, digests in self.cases.items():
            flat.update({f"cases.{case}.{part}": d for part, d in digests.items()})
        flat.update({f"entries.{entry}": d for entry, d in self.entries.items()})
        flat.update({f"code.{kind}": d for kind, d in self.code.items()})
        flat.update({f"images.{backend}": d for backend, d in self.images.items()})
        return dict(sorted(flat.items()))


class Manifest(Versioned):
    """releases/<id>/manifest.json: every input and output digest of a release (run
    metadata apart: that is ``runs.json``, see :class:`Runs`). ``version`` counts the
    re-grades of a frozen release (``releases/<id>.lock``); 1 otherwise."""

    SCHEMA_VERSION: ClassVar[int] = 3
    MIGRATES_FROM: ClassVar[tuple[int, ...]] = (2,)
    schema_version: int = 3

    release: str
    version: int = Field(default=1, ge=1)
    inputs: ManifestInputs
    cells: list[ManifestCell]
    release_json: Digest
    site: Digest

    @model_validator(mode="before")
    @classmethod
    def _from_v2(cls, data: Any) -> Any:
        """Version 2 had no version (it was 1) and fewer inputs (their defaults)."""
        if isinstance(data, dict) and data.get("schema_version") == 2:
            data = {**data, "schema_version": 3}
        return data


class CellLosses(Strict):
    """The cells of one kind whose worker or node died under them in one build, and how
    many of those were submitted again at once."""

    lost: int = Field(ge=1)
    resubmitted: int = Field(ge=0)


class RunTrace(Strict):
    """An attempt's trace counts as published: the gateway's (``source: gateway``) for an
    attempt through the model gateway, else the agent's own report; ``agent`` is the
    agent's own report of a gateway attempt, where it made one."""

    source: Literal["gateway", "agent"]
    counts: Trace
    agent: Trace | None = None


class Runs(Versioned):
    """releases/<id>/runs.json: the run metadata of a release's attempts (durations, logs),
    as of its last export, beside each attempt's trace counts (as the release JSON has
    them), and the cells lost in the build that exported it (``losses``, by kind). It
    differs between two builds of the same inputs; nothing is keyed on it."""

    SCHEMA_VERSION: ClassVar[int] = 3
    MIGRATES_FROM: ClassVar[tuple[int, ...]] = (1, 2)
    schema_version: int = 3

    release: str
    attempts: dict[str, Digest]  # attempt cell name -> its RunRecord blob
    wall_s: dict[str, float] = Field(default_factory=dict)  # attempt -> its last try's wall time
    traces: dict[str, RunTrace] = Field(default_factory=dict)  # attempt -> its trace counts
    losses: dict[str, CellLosses] = Field(default_factory=dict)  # kind -> its lost cells

    @model_validator(mode="before")
    @classmethod
    def _from_v1(cls, data: Any) -> Any:
        """Versions 1 and 2 had no trace counts (read as none)."""
        if isinstance(data, dict) and data.get("schema_version", 1) in (1, 2):
            data = {**data, "schema_version": 3}
        return data
