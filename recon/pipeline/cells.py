"""Running one cell: compute its key, reuse it from the action cache or run it, heal what
it reads, write its pointer.

Healing (DESIGN §4, "verify on read"): every object a cell reads is checked against its
digest as it is read (:class:`recon.store.Store`). A corrupt object is quarantined; a
corrupt or missing one drops every action record that reaches it, and the cell asks its
inputs again: an upstream cell whose record is gone, or whose pointer is missing or
garbage, is looked up by key and re-run, in this build. A deterministic cell re-run
gives the same digests, so nothing downstream moves; an attempt re-run is a retry.

The types it runs (:class:`~recon.pipeline.runtime.Cell`, the kind's compute, the
:class:`~recon.pipeline.runtime.Runtime`) live below it, in :mod:`recon.pipeline.runtime`.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from pydantic import ValidationError

from recon.errors import StoreError
from recon.model import CellRecord, Pointer, Ref
from recon.model.kinds import RUN_METADATA
from recon.pipeline.keys import cell_key
from recon.pipeline.runtime import Cell, Computed, Runtime, WorkerLost, kind_of
from recon.store import (
    CorruptObject,
    ObjectFault,
    Store,
    canonical_json,
    drop_reaching,
    walk_tree,
    write_atomic,
)

HEAL_ROUNDS = 4
"""How many times one cell may heal its inputs before the build gives up on the store."""
LOST_LIMIT = 2
"""How many lost workers a deterministic cell survives (it is simply submitted again);
an attempt's are bounded by its protocol's retry rule instead."""


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
