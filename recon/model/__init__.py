"""recon.model: one pydantic model per file format, each with a schema_version."""

from recon.model.base import Strict, Versioned, describe, load_json, load_yaml, read_yaml, validate
from recon.model.captures import PointCapture, ProbeResults
from recon.model.case import Artifact, Case, Provenance
from recon.model.contract import BuildStep, Contract, State, Viewport
from recon.model.entry import Agent, Budget, Entry, ModelPin, Sandbox
from recon.model.grading import Assertion, Grading
from recon.model.placeholders import PLACEHOLDERS
from recon.model.public import PUBLIC_TERMS, public_terms
from recon.model.records import (
    AttemptRecord,
    AttemptSummary,
    CaseScore,
    CellRecord,
    DimensionSummary,
    Egress,
    EntryResult,
    Manifest,
    ManifestCell,
    ManifestInputs,
    Outcome,
    Pointer,
    Ref,
    ReleaseResult,
    Reliability,
    RunRecord,
    Runs,
    Trace,
)
from recon.model.release import Aggregation, Protocol, ReleaseDef, Retry
from recon.model.values import Id, RelativePath, Route

SCHEMAS: dict[str, type[Versioned]] = {
    "case": Case,
    "contract": Contract,
    "provenance": Provenance,
    "grading": Grading,
    "entry": Entry,
    "release-definition": ReleaseDef,
    "attempt-record": AttemptRecord,
    "cell-record": CellRecord,
    "pointer": Pointer,
    "release": ReleaseResult,
    "manifest": Manifest,
    "run-record": RunRecord,
    "runs": Runs,
    "point-capture": PointCapture,
    "probe-results": ProbeResults,
}

__all__ = [
    "PLACEHOLDERS",
    "PUBLIC_TERMS",
    "SCHEMAS",
    "Agent",
    "Aggregation",
    "Artifact",
    "Assertion",
    "AttemptRecord",
    "AttemptSummary",
    "Budget",
    "BuildStep",
    "Case",
    "CaseScore",
    "CellRecord",
    "Contract",
    "DimensionSummary",
    "Egress",
    "Entry",
    "EntryResult",
    "Grading",
    "Id",
    "Manifest",
    "ManifestCell",
    "ManifestInputs",
    "ModelPin",
    "Outcome",
    "Pointer",
    "Protocol",
    "Provenance",
    "Ref",
    "RelativePath",
    "ReleaseDef",
    "ReleaseResult",
    "Reliability",
    "Retry",
    "Route",
    "RunRecord",
    "Runs",
    "Sandbox",
    "State",
    "Strict",
    "Trace",
    "Versioned",
    "Viewport",
    "describe",
    "load_json",
    "load_yaml",
    "public_terms",
    "read_yaml",
    "validate",
]
