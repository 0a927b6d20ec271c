"""Live progress of a build: cells done (ran, reused, up to date), running, failed, lost and
resubmitted by kind, each entry's attempts by outcome, the cells waiting for resources no
live node offers, throughput and an estimated time to finish (none while a cell waits).

:class:`Tracker` counts, per release being built, the events of
:func:`recon.pipeline.cells.run_cell` (started, finished) and of doit's reporter (up to
date, failed; :mod:`recon.pipeline.view`), and writes each release's snapshot atomically
to ``store/state/progress/<release>.json`` (:class:`~recon.model.BuildProgress`), which
``recon status`` reads from another shell. It is a :class:`~recon.pipeline.runtime.Progress`;
:class:`~recon.pipeline.runtime.Silent` ignores everything (checks, workers, tests).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from recon.errors import ReconError
from recon.model import BuildProgress, EntryAttempts, KindCounts, WaitingCell
from recon.store import StoreLayout, canonical_json, write_atomic
from recon.store.disk import DiskFull

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell

WRITE_EVERY_S = 0.5
"""Snapshots are written at most this often (and once when the build ends)."""


def snapshot_path(store_root: Path, release: str) -> Path:
    return StoreLayout(store_root).progress(release)


@dataclass
class _Counts:
    total: int = 0
    ran: int = 0
    reused: int = 0
    uptodate: int = 0
    running: int = 0
    failed: int = 0
    seconds: float = 0.0
    lost: int = 0
    resubmitted: int = 0

    def model(self) -> KindCounts:
        return KindCounts(**self.__dict__)


@dataclass
class _Entry:
    total: int = 0
    running: int = 0
    failed: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)

    def model(self) -> EntryAttempts:
        return EntryAttempts(**{**self.__dict__, "outcomes": dict(sorted(self.outcomes.items()))})


class Build:
    """The counts of one release's cells in this build."""

    def __init__(self, release: str, cells: list[Cell], executor: str, path: Path) -> None:
        self.release = release
        self.path = path
        self.executor = executor
        self.ids = {c.id for c in cells}
        self.kinds: dict[str, _Counts] = {}
        self.entries: dict[str, _Entry] = {}
        for cell in cells:
            self.kinds.setdefault(cell.kind, _Counts()).total += 1
            if cell.kind == "attempt":
                self.entries.setdefault(cell.params["entry"], _Entry()).total += 1
        self.active: set[str] = set()  # ids of the cells running now
        self.waiting: dict[str, WaitingCell] = {}  # of those, the ones no live node can run
        self.started = time.time()
        self.concurrency = 0
        self.finished = False
        self.ok: bool | None = None
        self.written = 0.0
        self.unsaved = False  # a snapshot could not be written (a full disk), said once

    def running(self) -> int:
        return len(self.active)

    def begin(self, cell: Cell) -> None:
        if cell.id in self.active:
            return
        self.active.add(cell.id)
        self.kinds[cell.kind].running += 1
        if cell.kind == "attempt":
            self.entries[cell.params["entry"]].running += 1
        self.concurrency = max(self.concurrency, len(self.active))

    def end(self, cell: Cell) -> None:
        if cell.id not in self.active:
            return
        self.active.discard(cell.id)
        self.waiting.pop(cell.id, None)
        self.kinds[cell.kind].running -= 1
        if cell.kind == "attempt":
            self.entries[cell.params["entry"]].running -= 1

    def snapshot(self) -> BuildProgress:
        now = time.time()
        done = sum(c.ran + c.reused for c in self.kinds.values())
        return BuildProgress(
            release=self.release,
            pid=os.getpid(),
            host=socket.gethostname(),
            executor=self.executor,
            started=round(self.started, 3),
            updated=round(now, 3),
            finished=self.finished,
            ok=self.ok,
            kinds={k: c.model() for k, c in sorted(self.kinds.items())},
            entries={e: a.model() for e, a in sorted(self.entries.items())},
            concurrency=self.concurrency,
            rate=round(done / max(now - self.started, 1e-3), 4),
            eta_s=None if self.waiting else self.eta(),
            waiting=dict(sorted(self.waiting.items())),
        )

    def eta(self) -> float | None:
        """Pending (and running) cells of each kind times the mean time of that kind's cells
        that ran, spread over the concurrency seen; None while a pending kind has no mean."""
        spread = max(1, self.concurrency)
        total = 0.0
        ran = [c for c in self.kinds.values() if c.ran]
        overall = sum(c.seconds for c in ran) / max(1, sum(c.ran for c in ran)) if ran else None
        for counts in self.kinds.values():
            left = counts.total - counts.ran - counts.reused - counts.uptodate - counts.failed
            if left <= 0:
                continue
            mean = counts.seconds / counts.ran if counts.ran else overall
            if mean is None:
                return None
            total += left * mean
        return round(total / spread, 1)


Listener = Callable[[Build, str], None]


class Tracker:
    """Counts every release being built; tells ``listeners`` (the views) of each change."""

    def __init__(self, store_root: Path, executor: str) -> None:
        self.store_root = store_root
        self.executor = executor
        self.builds: list[Build] = []
        self.listeners: list[Listener] = []
        self._lock = threading.Lock()

    def track(self, release: str, cells: list[Cell]) -> None:
        path = snapshot_path(self.store_root, release)
        self.builds.append(Build(release, cells, self.executor, path))

    def snapshots(self) -> list[BuildProgress]:
        """Every build's snapshot, taken while no event is being counted."""
        with self._lock:
            return [build.snapshot() for build in self.builds]

    def _of(self, cell: Cell) -> list[Build]:
        return [b for b in self.builds if cell.id in b.ids]

    def started(self, cell: Cell) -> None:
        with self._lock:
            for build in self._of(cell):
                build.begin(cell)
                self._changed(build, "started")

    def finished(self, cell: Cell, how: str, took: float, rt: Any) -> None:
        outcome = attempt_outcome(rt, cell) if cell.kind == "attempt" else None
        with self._lock:
            for build in self._of(cell):
                build.end(cell)
                counts = build.kinds[cell.kind]
                if how == "ran":
                    counts.ran += 1
                    counts.seconds += took
                elif how == "reused":
                    counts.reused += 1
                else:
                    counts.uptodate += 1
                if outcome is not None:
                    entry = build.entries[cell.params["entry"]]
                    entry.outcomes[outcome] = entry.outcomes.get(outcome, 0) + 1
                self._changed(build, how)

    def lost(self, cell: Cell, resubmitted: bool) -> None:
        """The worker or node running ``cell`` died; ``resubmitted``: it runs again now."""
        with self._lock:
            for build in self._of(cell):
                counts = build.kinds[cell.kind]
                counts.lost += 1
                counts.resubmitted += int(resubmitted)
                self._changed(build, "lost", force=True)

    def waiting(self, cell: Cell, state: WaitingCell | None) -> None:
        """``cell`` waits for resources no live node offers (``state``), or no longer."""
        with self._lock:
            for build in self._of(cell):
                if state is None:
                    build.waiting.pop(cell.id, None)
                elif cell.id in build.active:
                    build.waiting[cell.id] = state
                self._changed(build, "waiting", force=True)

    def losses(self, release: str) -> dict[str, tuple[int, int]]:
        """Kind -> (lost, resubmitted) of ``release``'s cells in this build, lost ones only."""
        with self._lock:
            return {
                kind: (c.lost, c.resubmitted)
                for build in self.builds
                if build.release == release
                for kind, c in sorted(build.kinds.items())
                if c.lost
            }

    def all_uptodate(self, release: str, cells: list[Cell]) -> None:
        """A release whose stamp held: every cell of it is up to date, none was visited
        (its attempts are counted under ``up to date``, their outcomes not read)."""
        with self._lock:
            for build in self.builds:
                if build.release != release:
                    continue
                for cell in cells:
                    build.kinds[cell.kind].uptodate += 1
                    if cell.kind == "attempt":
                        entry = build.entries[cell.params["entry"]]
                        entry.outcomes["up to date"] = entry.outcomes.get("up to date", 0) + 1
                self._changed(build, "uptodate", force=True)

    def failed(self, cell: Cell) -> None:
        with self._lock:
            for build in self._of(cell):
                build.end(cell)
                build.kinds[cell.kind].failed += 1
                if cell.kind == "attempt":
                    build.entries[cell.params["entry"]].failed += 1
                self._changed(build, "failed")

    def complete(self, ok: bool) -> None:
        with self._lock:
            for build in self.builds:
                build.finished, build.ok = True, ok
                self._changed(build, "complete", force=True)

    def interrupted(self) -> None:
        """Save each build's counts as they stand, still unfinished: ^C stopped it."""
        with self._lock:
            for build in self.builds:
                self._changed(build, "interrupted", force=True)

    def _changed(self, build: Build, what: str, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - build.written >= WRITE_EVERY_S:
            build.written = now
            data = canonical_json(build.snapshot().model_dump(mode="json"))
            try:
                write_atomic(build.path, data)
            except DiskFull as err:  # progress is for people: the build's own errors say it
                if not build.unsaved:
                    sys.stderr.write(f"[recon] progress of {build.release} not saved: {err}\n")
                build.unsaved = True
        for listener in self.listeners:
            listener(build, what)


def attempt_outcome(rt: Any, cell: Cell) -> str | None:
    """The outcome of the attempt's latest try (``retry`` while a retry is pending)."""
    pointer = rt.read_pointer(cell) if rt is not None else None
    if pointer is None or "record" not in pointer.outputs:
        return None
    if pointer.retry:
        return "retry"
    try:
        return str(rt.store.read_json(pointer.outputs["record"].digest)["outcome"])
    except (ReconError, OSError, KeyError, TypeError, ValueError):
        return None
