"""Where a cell's compute function runs: in this process (the default) or on a Ray cluster.

The coordinator (the doit process) always computes the key, looks the action cache up,
writes the action record and the pointer (:mod:`recon.pipeline.cells`); an executor only
runs ``compute`` and hands back the outputs, which are already in the store. Only the long
kinds (:data:`recon.model.kinds.LONG_KINDS`) ever leave the coordinator's process.

Selected by doit variables, as ``regrade=`` is: ``doit release:demo executor=ray
address=127.0.0.1:6379`` (or ``RECON_EXECUTOR`` and ``RECON_RAY_ADDRESS``; a variable wins).
``wait_s=`` and ``give_up_s=`` (``RECON_RAY_WAIT_S``, ``RECON_RAY_GIVE_UP_S``) are how long a
cell no live node can run waits before recon says so, and before the build stops
(:mod:`recon.pipeline.waiting`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from recon.errors import ConfigError, HarnessError
from recon.model import Ref
from recon.pipeline.waiting import Limits

if TYPE_CHECKING:
    from recon.pipeline.cells import Cell, Kind, Runtime

EXECUTORS = ("local", "ray")


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


@dataclass(frozen=True)
class ExecutorChoice:
    """The executor a build asked for (doit variables, else the environment)."""

    name: str = "local"
    address: str | None = None
    limits: Limits = field(default_factory=Limits)

    @classmethod
    def from_vars(
        cls,
        executor: str | None,
        address: str | None,
        wait_s: str | None = None,
        give_up_s: str | None = None,
    ) -> ExecutorChoice:
        name = executor or os.environ.get("RECON_EXECUTOR") or "local"
        address = address or os.environ.get("RECON_RAY_ADDRESS") or None
        limits = Limits.parse(wait_s or os.environ.get("RECON_RAY_WAIT_S"),
                              give_up_s or os.environ.get("RECON_RAY_GIVE_UP_S"))  # fmt: skip
        if name not in EXECUTORS:
            raise ConfigError(
                f"executor={name}: unknown executor (choose from {', '.join(EXECUTORS)}); "
                "e.g. `doit release:demo executor=ray address=127.0.0.1:6379`"
            )
        if name == "local" and address:
            raise ConfigError(
                f"address={address}: an address needs `executor=ray` (the local executor "
                "runs every cell in this process)"
            )
        return cls(name, address, limits)

    def open(self) -> Any:
        """The executor; a Ray one connects on its first long cell, not before."""
        if self.name == "ray":
            from recon.pipeline.raycluster import RayExecutor

            return RayExecutor(self.address or "auto", self.limits)
        return LocalExecutor()
