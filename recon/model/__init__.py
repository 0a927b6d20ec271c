"""recon.model: one pydantic model per file format, each with a schema_version."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.model._yaml import parse_yaml as parse_yaml
    from recon.model.base import Strict as Strict
    from recon.model.base import Versioned as Versioned
    from recon.model.base import describe as describe
    from recon.model.base import load_json as load_json
    from recon.model.base import load_yaml as load_yaml
    from recon.model.base import read_yaml as read_yaml
    from recon.model.base import validate as validate
    from recon.model.calibration import Calibration as Calibration
    from recon.model.captures import PointCapture as PointCapture
    from recon.model.captures import ProbeResults as ProbeResults
    from recon.model.case import Artifact as Artifact
    from recon.model.case import Case as Case
    from recon.model.case import Provenance as Provenance
    from recon.model.contract import BuildStep as BuildStep
    from recon.model.contract import Contract as Contract
    from recon.model.contract import State as State
    from recon.model.contract import Viewport as Viewport
    from recon.model.entry import Agent as Agent
    from recon.model.entry import Budget as Budget
    from recon.model.entry import Entry as Entry
    from recon.model.entry import ModelPin as ModelPin
    from recon.model.entry import Sandbox as Sandbox
    from recon.model.gateway import Exchange as Exchange
    from recon.model.gateway import GatewayOutcome as GatewayOutcome
    from recon.model.gateway import ModelPrice as ModelPrice
    from recon.model.gateway import PriceSource as PriceSource
    from recon.model.gateway import PriceTable as PriceTable
    from recon.model.gateway import Recording as Recording
    from recon.model.gateway import SseEvent as SseEvent
    from recon.model.gateway import Try as Try
    from recon.model.gateway import Usage as Usage
    from recon.model.grading import Assertion as Assertion
    from recon.model.grading import Grading as Grading
    from recon.model.lock import LockVersion as LockVersion
    from recon.model.lock import ReleaseLock as ReleaseLock
    from recon.model.matrix import Point as Point
    from recon.model.matrix import evidence_still as evidence_still
    from recon.model.matrix import points as points
    from recon.model.placeholders import PLACEHOLDERS as PLACEHOLDERS
    from recon.model.preferences import Judgement as Judgement
    from recon.model.preferences import PageJudgement as PageJudgement
    from recon.model.preferences import PairKey as PairKey
    from recon.model.progress import BuildProgress as BuildProgress
    from recon.model.progress import EntryAttempts as EntryAttempts
    from recon.model.progress import KindCounts as KindCounts
    from recon.model.progress import WaitingCell as WaitingCell
    from recon.model.public import PUBLIC_TERMS as PUBLIC_TERMS
    from recon.model.public import public_terms as public_terms
    from recon.model.records import AttemptRecord as AttemptRecord
    from recon.model.records import CellLosses as CellLosses
    from recon.model.records import CellRecord as CellRecord
    from recon.model.records import Egress as Egress
    from recon.model.records import Manifest as Manifest
    from recon.model.records import ManifestCell as ManifestCell
    from recon.model.records import ManifestInputs as ManifestInputs
    from recon.model.records import ModelUse as ModelUse
    from recon.model.records import Outcome as Outcome
    from recon.model.records import Pointer as Pointer
    from recon.model.records import Ref as Ref
    from recon.model.records import RunRecord as RunRecord
    from recon.model.records import Runs as Runs
    from recon.model.records import RunTrace as RunTrace
    from recon.model.records import Trace as Trace
    from recon.model.release import Aggregation as Aggregation
    from recon.model.release import Bootstrap as Bootstrap
    from recon.model.release import Protocol as Protocol
    from recon.model.release import ReleaseDef as ReleaseDef
    from recon.model.release import Retry as Retry
    from recon.model.result import AttemptSummary as AttemptSummary
    from recon.model.result import CaseScore as CaseScore
    from recon.model.result import DimensionSummary as DimensionSummary
    from recon.model.result import EntryRecord as EntryRecord
    from recon.model.result import EntryResult as EntryResult
    from recon.model.result import Estimate as Estimate
    from recon.model.result import ReleaseResult as ReleaseResult
    from recon.model.result import Reliability as Reliability
    from recon.model.result import ReliabilityReport as ReliabilityReport
    from recon.model.result import Uncertainty as Uncertainty
    from recon.model.result import Withdrawn as Withdrawn
    from recon.model.schemas import SCHEMAS as SCHEMAS
    from recon.model.stale import FailedCell as FailedCell
    from recon.model.stale import StaleMark as StaleMark
    from recon.model.values import Id as Id
    from recon.model.values import RelativePath as RelativePath
    from recon.model.values import Route as Route
    from recon.model.withdrawal import Active as Active
    from recon.model.withdrawal import Sidecar as Sidecar
    from recon.model.withdrawal import Withdrawals as Withdrawals

_EXPORTS = {
    "parse_yaml": "recon.model._yaml",
    "Strict": "recon.model.base",
    "Versioned": "recon.model.base",
    "describe": "recon.model.base",
    "load_json": "recon.model.base",
    "load_yaml": "recon.model.base",
    "read_yaml": "recon.model.base",
    "validate": "recon.model.base",
    "Calibration": "recon.model.calibration",
    "PointCapture": "recon.model.captures",
    "ProbeResults": "recon.model.captures",
    "Artifact": "recon.model.case",
    "Case": "recon.model.case",
    "Provenance": "recon.model.case",
    "BuildStep": "recon.model.contract",
    "Contract": "recon.model.contract",
    "State": "recon.model.contract",
    "Viewport": "recon.model.contract",
    "Agent": "recon.model.entry",
    "Budget": "recon.model.entry",
    "Entry": "recon.model.entry",
    "ModelPin": "recon.model.entry",
    "Sandbox": "recon.model.entry",
    "Exchange": "recon.model.gateway",
    "GatewayOutcome": "recon.model.gateway",
    "ModelPrice": "recon.model.gateway",
    "PriceSource": "recon.model.gateway",
    "PriceTable": "recon.model.gateway",
    "Recording": "recon.model.gateway",
    "SseEvent": "recon.model.gateway",
    "Try": "recon.model.gateway",
    "Usage": "recon.model.gateway",
    "Assertion": "recon.model.grading",
    "Grading": "recon.model.grading",
    "LockVersion": "recon.model.lock",
    "ReleaseLock": "recon.model.lock",
    "Point": "recon.model.matrix",
    "evidence_still": "recon.model.matrix",
    "points": "recon.model.matrix",
    "PLACEHOLDERS": "recon.model.placeholders",
    "Judgement": "recon.model.preferences",
    "PageJudgement": "recon.model.preferences",
    "PairKey": "recon.model.preferences",
    "BuildProgress": "recon.model.progress",
    "EntryAttempts": "recon.model.progress",
    "KindCounts": "recon.model.progress",
    "WaitingCell": "recon.model.progress",
    "PUBLIC_TERMS": "recon.model.public",
    "public_terms": "recon.model.public",
    "AttemptRecord": "recon.model.records",
    "CellLosses": "recon.model.records",
    "CellRecord": "recon.model.records",
    "Egress": "recon.model.records",
    "Manifest": "recon.model.records",
    "ManifestCell": "recon.model.records",
    "ManifestInputs": "recon.model.records",
    "ModelUse": "recon.model.records",
    "Outcome": "recon.model.records",
    "Pointer": "recon.model.records",
    "Ref": "recon.model.records",
    "RunRecord": "recon.model.records",
    "RunTrace": "recon.model.records",
    "Runs": "recon.model.records",
    "Trace": "recon.model.records",
    "Aggregation": "recon.model.release",
    "Bootstrap": "recon.model.release",
    "Protocol": "recon.model.release",
    "ReleaseDef": "recon.model.release",
    "Retry": "recon.model.release",
    "AttemptSummary": "recon.model.result",
    "CaseScore": "recon.model.result",
    "DimensionSummary": "recon.model.result",
    "EntryRecord": "recon.model.result",
    "EntryResult": "recon.model.result",
    "Estimate": "recon.model.result",
    "ReleaseResult": "recon.model.result",
    "Reliability": "recon.model.result",
    "ReliabilityReport": "recon.model.result",
    "Uncertainty": "recon.model.result",
    "Withdrawn": "recon.model.result",
    "SCHEMAS": "recon.model.schemas",
    "FailedCell": "recon.model.stale",
    "StaleMark": "recon.model.stale",
    "Id": "recon.model.values",
    "RelativePath": "recon.model.values",
    "Route": "recon.model.values",
    "Active": "recon.model.withdrawal",
    "Sidecar": "recon.model.withdrawal",
    "Withdrawals": "recon.model.withdrawal",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
