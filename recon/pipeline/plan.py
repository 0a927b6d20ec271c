"""``recon plan``: what a release costs, from the cell times measured in the store.

Every finished cell's action record holds ``duration_s`` (its compute time, wherever it
ran). Per kind, the release's own measured cells give the mean time and the mean stored
bytes (each output's objects, counted once per cell); a kind none of whose cells has run
yet borrows the records of that kind in the whole action cache. The release's cells are
counted by scope (per attempt, per case, per release), so a what-if of more cases,
entries or repeats scales each scope by its own factor.

Wall time at N workers lies between ``max(W / N, C)`` and ``W / N + C`` (Graham's bound
for list scheduling), where W is the total worker time and C the critical path: one
attempt, then its slower render cell, its grade, and the release's aggregate, site and
manifest, each at its kind's longest measured time.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from typing import Any

from recon.model import ReleaseDef
from recon.model.kinds import ATTEMPT_KINDS, CRITICAL, RELEASE_KINDS
from recon.pipeline.runtime import Cell, Runtime, walk
from recon.store import ObjectFault, Store, tree_files

BORROW_LIMIT = 2000
"""At most this many action records of a kind are read to borrow its times."""


@dataclass
class KindCost:
    kind: str
    count: float  # cells of this kind in the (scaled) release
    measured: int  # cells whose time was measured (this release's, else borrowed)
    mean_s: float
    max_s: float
    mean_bytes: float
    borrowed: bool = False

    @property
    def worker_s(self) -> float:
        return self.count * self.mean_s


@dataclass
class Plan:
    release: str
    workers: int
    kinds: dict[str, KindCost] = field(default_factory=dict)
    scale: dict[str, float] = field(default_factory=dict)

    @property
    def worker_s(self) -> float:
        return sum(k.worker_s for k in self.kinds.values())

    @property
    def critical_s(self) -> float:
        return sum(max((self.kinds[k].max_s for k in step if k in self.kinds), default=0.0)
                   for step in CRITICAL)  # fmt: skip

    @property
    def wall_s(self) -> tuple[float, float]:
        spread = self.worker_s / self.workers
        return max(spread, self.critical_s), spread + self.critical_s

    @property
    def bytes(self) -> float:
        return sum(k.count * k.mean_bytes for k in self.kinds.values())


@dataclass(frozen=True)
class WhatIf:
    cases: int | None = None
    entries: int | None = None
    repeats: int | None = None
    attempt_s: float | None = None  # assume this time per attempt instead of the measured one

    def any(self) -> bool:
        return any(v is not None for v in (self.cases, self.entries, self.repeats, self.attempt_s))

    def factors(self, release: ReleaseDef) -> dict[str, float]:
        cases = (self.cases or len(release.cases)) / len(release.cases)
        entries = (self.entries or len(release.entries)) / len(release.entries)
        repeats = (self.repeats or release.protocol.repeats) / release.protocol.repeats
        return {"attempt": cases * entries * repeats, "case": cases, "release": 1.0}


def scope(cell: Cell, attempts: set[str]) -> str:
    if cell.kind in ATTEMPT_KINDS and cell.name in attempts:
        return "attempt"
    return "release" if cell.kind in RELEASE_KINDS else "case"


def plan(rt: Runtime, release: ReleaseDef, root: Cell, workers: int, what_if: WhatIf) -> Plan:
    cells = list(walk([root]))
    attempts = {c.name for c in cells if c.kind == "attempt"}
    factors = what_if.factors(release)
    counts: dict[str, float] = {}
    measured: dict[str, list[tuple[float, int]]] = {}
    for cell in cells:
        counts[cell.kind] = counts.get(cell.kind, 0.0) + factors[scope(cell, attempts)]
        found = _measured(rt, cell)
        if found is not None:
            measured.setdefault(cell.kind, []).append(found)
    result = Plan(release.id, workers, scale=factors)
    for kind, count in sorted(counts.items()):
        rows, borrowed = measured.get(kind, []), False
        if not rows:
            rows, borrowed = _borrowed(rt, kind), True
        times = [t for t, _ in rows] or [0.0]
        cost = KindCost(kind, count, len(rows), statistics.fmean(times), max(times),
                        statistics.fmean([b for _, b in rows] or [0]), borrowed)  # fmt: skip
        if kind == "attempt" and what_if.attempt_s is not None:
            cost.mean_s = cost.max_s = what_if.attempt_s
        result.kinds[kind] = cost
    return result


def _measured(rt: Runtime, cell: Cell) -> tuple[float, int] | None:
    pointer = rt.read_pointer(cell)
    if pointer is None or pointer.retry:
        return None
    record = rt.cache.get(pointer.key)
    return _row(rt.store, record) if record is not None else None


def _row(store: Store, record: dict[str, Any]) -> tuple[float, int] | None:
    try:
        took = float(record["duration_s"])
        size = sum(_size(store, ref) for ref in record["outputs"].values())
    except (KeyError, TypeError, ValueError, ObjectFault):
        return None
    return took, size


def _size(store: Store, ref: dict[str, Any]) -> int:
    if ref.get("type") == "tree":
        files = tree_files(store, ref["digest"])
        return store.size(ref["digest"]) + sum(f.size for f in files.values())
    return store.size(ref["digest"])


def _borrowed(rt: Runtime, kind: str) -> list[tuple[float, int]]:
    """Times of ``kind`` cells from the whole action cache (other releases' cells)."""
    rows: list[tuple[float, int]] = []
    for key in rt.cache.iter_keys():
        if len(rows) >= BORROW_LIMIT:
            break
        path = rt.cache.root / key[:2] / f"{key}.json"
        try:
            record = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("kind") == kind:
            row = _row(rt.store, record)
            if row is not None:
                rows.append(row)
    return rows
