"""What a cell is and what it runs with: the types every part of the build shares.

:class:`Cell` is one node of the build DAG; :class:`Kind` is a kind's compute function
(:func:`kind_of` finds it in the kind's module of :mod:`recon.model.kinds`); an
:class:`Executor` runs a compute (:class:`LocalExecutor` in this process) and hands back
what it :class:`Computed`; :class:`Progress` hears each cell start and finish
(:class:`Silent` hears nothing); a :class:`Runtime` holds the store, the caches and the
long-lived resources of one run.

This module sits below everything else in the pipeline: the loop that runs cells
(:mod:`recon.pipeline.cells`), the executors (:mod:`recon.pipeline.executor`,
:mod:`recon.pipeline.raycluster`, :mod:`recon.pipeline.worker`), progress and the kind
modules import it, and it imports none of them.
"""

from __future__ import annotations

import importlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError

from recon.errors import HarnessError
from recon.model import Pointer, Ref, WaitingCell
from recon.model.kinds import KIND_MODULES
from recon.pipeline.keys import Codes, tool_versions
from recon.pipeline.kinds._base import Produced
from recon.project.loader import Project
from recon.store import ActionCache, StatCache

T = TypeVar("T")


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


@dataclass(frozen=True)
class Kind:
    """A kind's compute function and, if it reads project files, its extra inputs."""

    compute: Callable[[Runtime, Cell, dict[str, str]], Produced]
    extra: Callable[[Runtime, Cell], dict[str, str]] | None


def kind_of(name: str) -> Kind:
    module = importlib.import_module(KIND_MODULES[name])
    return Kind(getattr(module, name), getattr(module, f"{name}_extra", None))


@dataclass(frozen=True)
class Computed:
    """What a cell's compute left in the store, and how long it took where it ran."""

    outputs: dict[str, Ref]
    retry: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    took: float = 0.0
    reused: bool = False  # a worker found the key's record already: nothing ran


class WorkerLost(HarnessError):
    """The worker process or node running a cell died before it answered: a harness
    failure of that cell, never a result (:func:`recon.pipeline.cells.run_cell` retries)."""


class Executor(Protocol):
    name: str

    def compute(
        self, rt: Runtime, cell: Cell, kind: Kind, inputs: dict[str, str], key: str
    ) -> Computed: ...

    def close(self) -> None: ...


class LocalExecutor:
    """Every cell in this process (doit's ``-n K -P thread`` gives K at once)."""

    name = "local"

    def compute(
        self, rt: Runtime, cell: Cell, kind: Kind, inputs: dict[str, str], key: str
    ) -> Computed:
        return compute_here(rt, cell, kind, inputs)

    def close(self) -> None:
        pass


def compute_here(rt: Runtime, cell: Cell, kind: Kind, inputs: dict[str, str]) -> Computed:
    started = time.perf_counter()
    produced = kind.compute(rt, cell, inputs)
    took = time.perf_counter() - started
    return Computed(produced.outputs, produced.retry, produced.timings, took)


class Progress(Protocol):
    def started(self, cell: Cell) -> None: ...

    def finished(self, cell: Cell, how: str, took: float, rt: Any) -> None: ...

    def lost(self, cell: Cell, resubmitted: bool) -> None: ...

    def waiting(self, cell: Cell, state: WaitingCell | None) -> None: ...

    def losses(self, release: str) -> dict[str, tuple[int, int]]: ...


class Silent:
    """Progress that goes nowhere."""

    def started(self, cell: Cell) -> None:
        pass

    def finished(self, cell: Cell, how: str, took: float, rt: Any) -> None:
        pass

    def lost(self, cell: Cell, resubmitted: bool) -> None:
        pass

    def waiting(self, cell: Cell, state: WaitingCell | None) -> None:
        pass

    def losses(self, release: str) -> dict[str, tuple[int, int]]:
        return {}


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
        self.store = project.store()
        self.cache = ActionCache(project.store_root)
        self.stat = StatCache(project.layout.stat_db)
        chromium = project.settings.chromium
        self.codes = Codes(self.stat, tools=lambda: tool_versions(chromium),
                           facts=project.layout.codegraph)  # fmt: skip
        self._shared: dict[type, Any] = {}
        self._locks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    def code(self, kind: str) -> str:
        return self.codes.digest(kind)

    def pointer_path(self, cell: Cell) -> Path:
        return self.project.layout.pointer(cell.kind, cell.name)

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

    def shared(self, kind: type[T], make: Callable[[], T] | None = None) -> T:
        """The run's one ``kind``, made (by ``make()``, else ``kind()``) on first use and
        shared by every cell of the run: the browser pool of the render kinds
        (:class:`recon.render.BrowserPool`), the scripted model servers of the attempt kind
        (:class:`recon.agents.ModelServers`). The kind that needs one names it, so it is in
        that kind's code; this module imports no kind's resources. :meth:`close` closes
        each that has a ``close``."""
        with self._guard:
            if kind not in self._shared:
                self._shared[kind] = (make or kind)()
            found: T = self._shared[kind]
            return found

    def close(self) -> None:
        """Close the shared resources (the browsers) and flush the stat cache (doit calls
        this as a teardown)."""
        with self._guard:
            made, self._shared = list(self._shared.values()), {}
        for resource in made:
            if callable(getattr(resource, "close", None)):
                resource.close()
        self.stat.flush()
        self.executor.close()


def load_pointer(path: Path) -> Pointer | None:
    try:
        return Pointer.model_validate(json.loads(path.read_bytes()))
    except (OSError, ValueError, ValidationError):
        return None
