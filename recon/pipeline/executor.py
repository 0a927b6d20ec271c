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

The executor protocol, the local executor and what an executor hands back
(:class:`~recon.pipeline.runtime.Computed`, :class:`~recon.pipeline.runtime.WorkerLost`)
live in :mod:`recon.pipeline.runtime`, below this module and the Ray executor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from recon.errors import ConfigError
from recon.pipeline.runtime import LocalExecutor
from recon.pipeline.waiting import GIVE_UP_S, WAIT_S, Limits
from recon.project.settings import EXECUTORS, Settings


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
        settings: Settings | None = None,
    ) -> ExecutorChoice:
        """The doit variables, else the ``settings`` (none: the defaults)."""
        found = settings or Settings()
        name = executor or found.executor or "local"
        address = address or found.ray_address or None
        defaults = Limits(found.ray_wait_s or WAIT_S, found.ray_give_up_s or GIVE_UP_S)
        limits = Limits.parse(wait_s, give_up_s, defaults)
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
