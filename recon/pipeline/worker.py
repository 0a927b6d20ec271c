"""What a Ray worker runs for one cell: :func:`execute` of a :class:`CellJob`.

The job carries the cell (without its upstream cells: compute functions read their inputs
by digest), its key, its input digests and the coordinator's code digest of its kind. The
worker opens the same project and store (a path every node mounts), and:

- refuses, naming the difference, when its own code digest of the kind differs (a node
  running other recon code would store other outputs under the same key);
- returns the action cache's record when the key is already there (idempotent by key:
  a second submission of a finished cell runs nothing);
- otherwise computes, every object read verified against its digest, every output put
  into the store atomically. It never writes an action record or a pointer: that is the
  coordinator's, once the answer is back.

Faults come back as values (:class:`Fault`, :class:`Refused`), so the coordinator heals
or fails the cell as it would in-process.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from recon.errors import ReconError
from recon.model import Ref
from recon.pipeline.runtime import Cell, Computed, Runtime, compute_here, kind_of
from recon.project.loader import Project
from recon.project.settings import Settings
from recon.store import CorruptObject, ObjectFault


@dataclass(frozen=True)
class CellJob:
    root: str
    store_root: str
    sealed_root: str | None
    verify_reads: bool
    settings: Settings  # the coordinator's (its RECON_* variables)
    kind: str
    name: str
    params: dict[str, Any]
    context: dict[str, Any]
    key: str
    code: str  # the coordinator's code digest of the kind
    inputs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Fault:
    """An input object was missing or corrupt (then quarantined) on the worker."""

    digest: str
    corrupt: bool
    message: str


@dataclass(frozen=True)
class Refused:
    """The cell failed as a ReconError would have failed it in-process."""

    message: str


_RUNTIMES: dict[tuple[str, str, str | None, bool], Runtime] = {}
"""One Runtime per project per worker process, so its browsers are reused across cells
(Ray keeps a worker process for many tasks). Process-local by nature: a worker's cache."""
_GUARD = threading.Lock()


def _runtime(job: CellJob) -> Runtime:
    ident = (job.root, job.store_root, job.sealed_root, job.verify_reads)
    with _GUARD:
        if ident not in _RUNTIMES:
            _RUNTIMES[ident] = Runtime(Project.open(Path(job.root), job.settings))
        return _RUNTIMES[ident]


def execute(job: CellJob) -> Computed | Fault | Refused:
    """Run one cell's compute on this worker (see the module docstring)."""
    try:
        return _execute(job)
    except ObjectFault as fault:
        return Fault(fault.digest, isinstance(fault, CorruptObject), str(fault))
    except ReconError as err:
        return Refused(str(err))


def _execute(job: CellJob) -> Computed | Fault | Refused:
    missing = [p for p in (job.root, job.store_root) if not Path(p).is_dir()]
    if missing:
        return Refused(
            f"this node has no {missing[0]}: every node needs the project checkout and the "
            "store at the coordinator's paths (mount them there)"
        )
    rt = _runtime(job)
    mine = rt.code(job.kind)
    if mine != job.code:
        return Refused(
            f"this node's code for {job.kind} cells ({mine[:12]}) differs from the "
            f"coordinator's ({job.code[:12]}): check out the same recon and chromium on it"
        )
    done = _recorded(rt, job.key)
    if done is not None:
        return done
    cell = Cell(job.kind, job.name, job.params, {}, job.context)
    return compute_here(rt, cell, kind_of(job.kind), job.inputs)


def _recorded(rt: Runtime, key: str) -> Computed | None:
    """The key's finished record, if the action cache has one (nothing runs again)."""
    record = rt.cache.get(key)
    if record is None or record.get("retry", False):
        return None
    try:
        outputs = {k: Ref.model_validate(v) for k, v in record["outputs"].items()}
    except (ValidationError, AttributeError, KeyError):
        return None
    return Computed(outputs, False, dict(record.get("timings", {})), 0.0, reused=True)


def close_all() -> None:
    """Close every runtime of this worker (its browsers); for tests and shutdown hooks."""
    with _GUARD:
        for rt in _RUNTIMES.values():
            rt.close()
        _RUNTIMES.clear()
