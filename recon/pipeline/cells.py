"""Running one cell: compute its key, reuse it from the action cache or run it, write a pointer."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from recon.model import CellRecord, Pointer, Ref
from recon.pipeline.keys import cell_key, code_digest
from recon.pipeline.project import Project
from recon.store import ActionCache, StatCache, Store, canonical_json, write_atomic

T = TypeVar("T")


@dataclass(frozen=True)
class Cell:
    """One node of the build DAG."""

    kind: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    deps: dict[str, Cell] = field(default_factory=dict)
    context: dict[str, Any] = field(default_factory=dict)  # read by compute, not in the key

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.name}"


@dataclass
class Produced:
    """What a cell's compute function returns."""

    outputs: dict[str, Ref]
    retry: bool = False
    timings: dict[str, float] = field(default_factory=dict)


class Runtime:
    """Store, caches and long-lived resources (one browser per worker thread) for one run."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.store = Store(project.store_root)
        self.cache = ActionCache(project.store_root)
        self.stat = StatCache(project.store_root / "state" / "stat.sqlite")
        self._codes: dict[str, str] = {}
        self._pool: Any = None

    def code(self, kind: str) -> str:
        if kind not in self._codes:
            self._codes[kind] = code_digest(kind, self.stat)
        return self._codes[kind]

    def pointer_path(self, cell: Cell) -> Path:
        return self.project.store_root / "cells" / cell.kind / f"{cell.name}.json"

    def read_pointer(self, cell: Cell) -> Pointer:
        data = json.loads(self.pointer_path(cell).read_bytes())
        return Pointer.model_validate(data)

    def render(self, job: Callable[[Any], T]) -> T:
        """Run ``job(browser)`` on one of the pool's browsers (started on first use)."""
        if self._pool is None:
            from recon.render import BrowserPool

            self._pool = BrowserPool()
        return self._pool.run(job)

    def close(self) -> None:
        """Close the browsers and flush the stat cache (doit calls this as a teardown)."""
        if self._pool is not None:
            self._pool.close()
        self.stat.flush()


def input_digests(rt: Runtime, cell: Cell) -> dict[str, str]:
    """The output digests of every upstream cell, flattened as ``dep.output``."""
    found: dict[str, str] = {}
    for label, dep in sorted(cell.deps.items()):
        pointer = rt.read_pointer(dep)
        for out, ref in sorted(pointer.outputs.items()):
            found[f"{label}.{out}"] = ref.digest
    return found


Compute = Callable[[Runtime, Cell, dict[str, str]], Produced]


def run_cell(rt: Runtime, cell: Cell, compute: Compute, extra: dict[str, str] | None = None) -> str:
    """Reuse or run ``cell``; write its pointer. Returns ``"ran"`` or ``"reused"``."""
    inputs = {**input_digests(rt, cell), **(extra or {})}
    key = cell_key(cell.kind, rt.code(cell.kind), inputs, cell.params)
    record = rt.cache.get(key)
    if record is not None and not record.get("retry", False):
        outputs = {k: Ref.model_validate(v) for k, v in record["outputs"].items()}
        _write_pointer(rt, cell, key, outputs, retry=False)
        _say("reused", cell, 0.0)
        return "reused"
    started = time.perf_counter()
    produced = compute(rt, cell, inputs)
    took = time.perf_counter() - started
    if not produced.retry:
        rec = CellRecord(
            kind=cell.kind,
            name=cell.name,
            key=key,
            inputs=inputs,
            outputs=produced.outputs,
            duration_s=round(took, 3),
            timings=produced.timings,
        )
        rt.cache.put(key, rec.model_dump(mode="json"))
    _write_pointer(rt, cell, key, produced.outputs, retry=produced.retry)
    _say("ran", cell, took)
    return "ran"


def _write_pointer(rt: Runtime, cell: Cell, key: str, outputs: dict[str, Ref], retry: bool) -> None:
    pointer = Pointer(kind=cell.kind, name=cell.name, key=key, outputs=outputs, retry=retry)
    data = canonical_json(pointer.model_dump(mode="json"))
    path = rt.pointer_path(cell)
    if path.exists() and path.read_bytes() == data:
        return  # unchanged: keep mtime so downstream checks stay cheap
    write_atomic(path, data)


def _say(what: str, cell: Cell, took: float) -> None:
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
