"""Running one cell: compute its key, reuse it from the action cache or run it, heal what
it reads, write its pointer.

Healing (DESIGN §4, "verify on read"): every object a cell reads is checked against its
digest as it is read (:class:`recon.store.Store`). A corrupt object is quarantined; a
corrupt or missing one drops every action record that reaches it, and the cell asks its
inputs again: an upstream cell whose record is gone, or whose pointer is missing or
garbage, is looked up by key and re-run, in this build. A deterministic cell re-run
gives the same digests, so nothing downstream moves; an attempt re-run is a retry.
"""

from __future__ import annotations

import importlib
import json
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from recon.agents.scripted import ModelServers
from recon.errors import HarnessError, StoreError
from recon.model import CellRecord, Pointer, Ref
from recon.model.kinds import RUN_METADATA
from recon.pipeline.executor import Computed, Executor, LocalExecutor, WorkerLost
from recon.pipeline.keys import KIND_MODULES, Codes, cell_key
from recon.pipeline.kinds._base import Produced
from recon.pipeline.progress import Progress, Silent
from recon.project.loader import Project
from recon.store import (
    ActionCache,
    CorruptObject,
    ObjectFault,
    StatCache,
    Store,
    canonical_json,
    drop_reaching,
    walk_tree,
    write_atomic,
)

T = TypeVar("T")
HEAL_ROUNDS = 4
"""How many times one cell may heal its inputs before the build gives up on the store."""
LOST_LIMIT = 2
"""How many lost workers a deterministic cell survives (it is simply submitted again);
an attempt's are bounded by its protocol's retry rule instead."""


@dataclass(frozen=True)
class Cell:
    """One node of the build DAG."""

    kind: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    deps: dict[str, Cell] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)  # read by compute, not in the key
    reads: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Dep label -> the only outputs of it the cell reads (default: every content output)."""

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.name}"


class Runtime:
    """Store, caches and long-lived resources (one browser per worker thread) for one run."""

    def __init__(
        self,
        project: Project,
        executor: Executor | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.project = project
        self.executor: Executor = executor or LocalExecutor()
        self.progress: Progress = progress or Silent()
        self.store = Store(project.store_root, verify=project.verify_reads)
        self.cache = ActionCache(project.store_root)
        self.stat = StatCache(project.store_root / "state" / "stat.sqlite")
        self.codes = Codes(self.stat, facts=project.store_root / "state" / "codegraph.json")
        self._pool: Any = None
        self.models = ModelServers()  # scripted model servers, started on demand
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    def code(self, kind: str) -> str:
        return self.codes.digest(kind)

    def pointer_path(self, cell: Cell) -> Path:
        return self.project.store_root / "cells" / cell.kind / f"{cell.name}.json"

    def read_pointer(self, cell: Cell) -> Pointer | None:
        """The cell's pointer, or None when it is missing or not a pointer (garbage)."""
        return load_pointer(self.pointer_path(cell))

    def require_pointer(self, cell: Cell) -> Pointer:
        pointer = self.read_pointer(cell)
        if pointer is None:
            raise HarnessError(f"{cell.id}: its pointer {self.pointer_path(cell)} is unreadable")
        return pointer

    def lock(self, cell: Cell) -> threading.RLock:
        """One lock per cell: two worker threads healing the same upstream run it once."""
        with self._guard:
            return self._locks.setdefault(cell.id, threading.RLock())

    def render(self, job: Callable[[Any], T]) -> T:
        """Run ``job(browser)`` on one of the pool's browsers (started on first use; checked
        before every job, relaunched when dead or hung). A job whose page broke its browser
        twice raises :class:`~recon.errors.PageError` (:mod:`recon.render.pool`)."""
        with self._guard:
            if self._pool is None:
                from recon.render import BrowserPool

                self._pool = BrowserPool()
        return self._pool.run(job)

    def close(self) -> None:
        """Close the browsers and flush the stat cache (doit calls this as a teardown)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None
        self.stat.flush()
        self.executor.close()


def load_pointer(path: Path) -> Pointer | None:
    try:
        return Pointer.model_validate(json.loads(path.read_bytes()))
    except (OSError, ValueError, ValidationError):
        return None


@dataclass(frozen=True)
class Kind:
    """A kind's compute function and, if it reads project files, its extra inputs."""

    compute: Callable[[Runtime, Cell, dict[str, str]], Produced]
    extra: Callable[[Runtime, Cell], dict[str, str]] | None


def kind_of(name: str) -> Kind:
    module = importlib.import_module(KIND_MODULES[name])
    return Kind(getattr(module, name), getattr(module, f"{name}_extra", None))


def run_cell(rt: Runtime, cell: Cell) -> str:
    """Reuse or run ``cell``, healing what it reads; write its pointer.

    Returns ``"ran"`` or ``"reused"``.
    """
    with rt.lock(cell):
        for _ in range(HEAL_ROUNDS):
            try:
                return _run_once(rt, cell)
            except ObjectFault as fault:
                heal(rt, cell, fault)
    raise StoreError(
        f"{cell.id}: its inputs were still corrupt or missing after {HEAL_ROUNDS} repairs; "
        "run `recon store verify --repair` and look at the disk"
    )


def _run_once(rt: Runtime, cell: Cell) -> str:
    kind = kind_of(cell.kind)
    inputs = input_digests(rt, cell)
    if kind.extra is not None:
        inputs |= kind.extra(rt, cell)
    key = cell_key(cell.kind, rt.code(cell.kind), inputs, cell.params)
    outputs = _cached(rt, key)
    if outputs is not None:
        return _reused(rt, cell, key, outputs)
    rt.progress.started(cell)
    losses = 0
    while True:
        try:
            done = rt.executor.compute(rt, cell, kind, inputs, key)
        except WorkerLost as lost:
            losses += 1
            after = _after_loss(rt, cell, inputs, key, lost, losses)
            if after == "again":
                continue
            if after == "failed":
                raise
            done = Computed({}, took=0.0)  # a final harness failure, recorded
            break
        if done.reused:
            return _reused(rt, cell, key, done.outputs)
        record(rt, cell, key, inputs, done)
        break
    say("ran", cell, done.took)
    rt.progress.finished(cell, "ran", done.took, rt)
    return "ran"


def _reused(rt: Runtime, cell: Cell, key: str, outputs: dict[str, Ref]) -> str:
    write_pointer(rt, cell, key, outputs, retry=False)
    say("reused", cell, 0.0)
    rt.progress.finished(cell, "reused", 0.0, rt)
    return "reused"


def record(rt: Runtime, cell: Cell, key: str, inputs: dict[str, str], done: Computed) -> None:
    """The action record (a finished cell), then the pointer: in that order, so a build
    killed between the two finds the record and reuses it (never half-recorded). When
    another build recorded the same key first, its outputs are the cell's (the pointer
    names what the record holds: one attempt, never two)."""
    outputs = done.outputs
    if not done.retry:
        rec = CellRecord(
            kind=cell.kind,
            name=cell.name,
            key=key,
            inputs=inputs,
            outputs=done.outputs,
            duration_s=round(done.took, 3),
            timings=done.timings,
        )
        if not rt.cache.put(key, rec.model_dump(mode="json")):
            outputs = _cached(rt, key) or outputs
    write_pointer(rt, cell, key, outputs, retry=done.retry)


def _after_loss(
    rt: Runtime, cell: Cell, inputs: dict[str, str], key: str, lost: WorkerLost, losses: int
) -> str:
    """A lost worker. An attempt records a harness-failure try, and runs again at once
    while its protocol allows a retry (``"again"``), else the failure is final and recorded
    (``"recorded"``); another cell is submitted again up to LOST_LIMIT times, then fails."""
    if cell.kind == "attempt":
        from recon.pipeline.kinds.attempt import attempt_lost

        produced = attempt_lost(rt, cell, inputs, f"harness: {lost}")
        record(rt, cell, key, inputs, Computed(produced.outputs, produced.retry))
        after = "again" if produced.retry else "recorded"
    else:
        after = "again" if losses <= LOST_LIMIT else "failed"
    rt.progress.lost(cell, resubmitted=after == "again")
    what = {"again": "retried now", "recorded": "final (protocol.retry)",
            "failed": f"failed: lost {losses} times, and a cell is submitted again at most "
                      f"{LOST_LIMIT} times; the build fails, finished cells are kept, and the "
                      "same command resumes it"}  # fmt: skip
    sys.stderr.write(f"[recon] lost   {cell.id}  {lost}; {what[after]}\n")
    sys.stderr.flush()
    return after


def _cached(rt: Runtime, key: str) -> dict[str, Ref] | None:
    """A finished cell's outputs, every object of them verified; None if not finished."""
    record = rt.cache.get(key)
    if record is None or record.get("retry", False):
        return None
    try:
        outputs = {k: Ref.model_validate(v) for k, v in record["outputs"].items()}
    except (ValidationError, AttributeError):
        rt.cache.remove(key)
        return None
    for ref in outputs.values():
        verify_ref(rt.store, ref)
    return outputs


def verify_ref(store: Store, ref: Ref) -> None:
    """Check every object an output reaches (raises :class:`ObjectFault`)."""
    store.check(ref.digest)
    if ref.type == "tree":
        for found in walk_tree(store, ref.digest):
            store.check(found.digest)


def input_digests(
    rt: Runtime, cell: Cell, upstream: Callable[[Runtime, Cell], Pointer] | None = None
) -> dict[str, str]:
    """The digests the cell reads from upstream, flattened as ``dep.output``: every content
    output of each dep (never run metadata), or only those ``cell.reads`` names.

    ``upstream`` gives a dep's pointer: by default :func:`ensure`, which heals it."""
    found: dict[str, str] = {}
    for label, dep in sorted(cell.deps.items()):
        pointer = (upstream or ensure)(rt, dep)
        wanted = cell.reads.get(label)
        skip = RUN_METADATA.get(dep.kind, ())
        for out, ref in sorted(pointer.outputs.items()):
            if (out in wanted) if wanted is not None else (out not in skip):
                found[f"{label}.{out}"] = ref.digest
    return found


def ensure(rt: Runtime, cell: Cell) -> Pointer:
    """The pointer of a finished upstream cell: re-run (or reused by key) when its pointer
    is missing or garbage, or when its action record was dropped by a repair."""
    pointer = rt.read_pointer(cell)
    if pointer is not None and (pointer.retry or rt.cache.has(pointer.key)):
        return pointer
    run_cell(rt, cell)
    return rt.require_pointer(cell)


def heal(rt: Runtime, cell: Cell, fault: ObjectFault) -> None:
    """Drop every action record that reaches the faulty object; the caller runs again."""
    dropped = drop_reaching(rt.store, rt.cache, {fault.digest})
    what = "corrupt (quarantined)" if isinstance(fault, CorruptObject) else "missing"
    sys.stderr.write(
        f"[recon] healed {cell.id}: object {fault.digest[:12]} {what}; "
        f"{len(dropped)} record(s) dropped, their cells run again\n"
    )
    sys.stderr.flush()


def write_pointer(rt: Runtime, cell: Cell, key: str, outputs: dict[str, Ref], retry: bool) -> None:
    pointer = Pointer(kind=cell.kind, name=cell.name, key=key, outputs=outputs, retry=retry)
    data = canonical_json(pointer.model_dump(mode="json"))
    path = rt.pointer_path(cell)
    try:
        if path.read_bytes() == data:
            return  # unchanged: keep mtime so downstream checks stay cheap
    except OSError:
        pass
    write_atomic(path, data)


def say(what: str, cell: Cell, took: float) -> None:
    # One write per line: print() writes the text and the newline separately, and under
    # ``doit -P thread`` two workers' lines then run into each other.
    sys.stderr.write(f"[recon] {what:<6} {cell.id}  {took:.2f}s\n")
    sys.stderr.flush()


def walk(cells: list[Cell]) -> Iterator[Cell]:
    """Every cell reachable from ``cells``, dependencies first, each once."""
    seen: set[str] = set()

    def visit(cell: Cell) -> Iterator[Cell]:
        if cell.id in seen:
            return
        seen.add(cell.id)
        for dep in cell.deps.values():
            yield from visit(dep)
        yield cell

    for cell in cells:
        yield from visit(cell)
