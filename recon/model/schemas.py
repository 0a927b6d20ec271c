"""Every file format by its schema name: what ``recon schema`` exports as JSON Schema."""

from __future__ import annotations

from recon.model.base import Versioned
from recon.model.calibration import Calibration
from recon.model.captures import PointCapture, ProbeResults
from recon.model.case import Case, Provenance
from recon.model.contract import Contract
from recon.model.entry import Entry
from recon.model.gateway import PriceTable, Recording
from recon.model.grading import Grading
from recon.model.lock import ReleaseLock
from recon.model.preferences import Judgement, PageJudgement, PairKey
from recon.model.progress import BuildProgress
from recon.model.records import AttemptRecord, CellRecord, Manifest, Pointer, RunRecord, Runs
from recon.model.release import ReleaseDef
from recon.model.result import ReleaseResult
from recon.model.stale import StaleMark
from recon.model.withdrawal import Sidecar, Withdrawals

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
    "release-lock": ReleaseLock,
    "withdrawal-sidecar": Sidecar,
    "withdrawals": Withdrawals,
    "point-capture": PointCapture,
    "probe-results": ProbeResults,
    "build-progress": BuildProgress,
    "calibration": Calibration,
    "preference": Judgement,
    "page-judgement": PageJudgement,
    "pair-key": PairKey,
    "price-table": PriceTable,
    "gateway-recording": Recording,
    "stale-mark": StaleMark,
}
