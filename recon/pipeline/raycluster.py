"""The Ray executor: each long cell's compute is a Ray task on the cluster.

doit stays the driver (``doit -n K -P thread release:<id> executor=ray address=…``): each
of its K threads runs one cell at a time, and a long cell's thread submits its compute
as a Ray task and waits for it. The task asks for resources from what the cell needs
(:func:`resources`): an attempt its entry's CPUs and memory, plus one ``docker`` for a
formal (docker) attempt; a render cell (oracle, capture, probe) one CPU and one
``browser``; a grade one CPU. Nodes declare ``docker`` and ``browser`` with
``ray start --resources``.

Before joining, the head's address must accept a connection within REACH_S (5 s): one no
cluster answers on is bad input (exit 2), not a hang in ``ray.init``.

A task never retries on its own (``max_retries=0``): a worker or node lost in the middle
of a cell comes back as :class:`~recon.pipeline.runtime.WorkerLost`, which the
coordinator records as a harness failure and retries per protocol.

A thread waits for its task in polls (``ray.wait`` with a timeout); at each it asks which
nodes are alive and what they offer, and :class:`~recon.pipeline.waiting.Watch` decides
whether the cell is starved (no live node offers what it needs), when to say so, and when
to give up (:mod:`recon.pipeline.waiting`). Ray's own autoscaler lines (an infeasible or
pending demand) are passed to this process's stderr as ``[ray] …``; the workers' own output
stays on the nodes.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from recon.errors import ConfigError, HarnessError, ResourcesUnavailable
from recon.model.kinds import BROWSER_KINDS, LONG_KINDS
from recon.pipeline.runtime import Computed, WorkerLost, compute_here
from recon.pipeline.waiting import Limits, Watch, demand, live_offers
from recon.pipeline.worker import CellJob, Fault, Refused, execute
from recon.store import CorruptObject, MissingObject

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell, Kind, Runtime

MiB = 1 << 20
CUSTOM = ("docker", "browser")
POLL_S = 5.0
"""A waiting thread looks at the cluster at most this often (less when ``wait_s`` is small)."""
REACH_S = 5.0
"""How long the head's address may take to accept a connection before the build is refused
(``ray.init`` itself retries an address nothing answers on for ever)."""


def resources(rt: Runtime, cell: Cell) -> dict[str, Any]:
    """The Ray resources one cell's task asks for."""
    if cell.kind == "attempt":
        entry = rt.project.entries[cell.params["entry"]]
        protocol = rt.project.release(cell.context["release"]).protocol
        wanted: dict[str, Any] = {
            "num_cpus": entry.budget.cpus,
            "memory": entry.budget.memory_mb * MiB,
        }
        if protocol.backend == "docker":
            wanted["resources"] = {"docker": 1}
        return wanted
    if cell.kind in BROWSER_KINDS:
        return {"num_cpus": 1, "resources": {"browser": 1}}
    return {"num_cpus": 1}


def _lost_errors() -> tuple[type[BaseException], ...]:
    import ray.exceptions as rx

    names = ("WorkerCrashedError", "NodeDiedError", "LocalRayletDiedError", "ObjectLostError",
             "OwnerDiedError", "RaySystemError", "TaskCancelledError")  # fmt: skip
    return tuple(getattr(rx, n) for n in names if hasattr(rx, n))


class RayExecutor:
    name = "ray"

    def __init__(self, address: str, limits: Limits | None = None) -> None:
        self.address = address
        self.limits = limits or Limits()
        self.stopping = False  # a cell gave up: every starved cell gives up too
        self._ray: Any = None
        self._task: Any = None
        self._offered: dict[str, float] = {}
        self._refused: ConfigError | None = None
        self._lock = threading.Lock()

    def _connect(self, rt: Runtime) -> Any:
        with self._lock:
            if self._refused is not None:  # said once; every other cell stops with it
                raise self._refused
            if self._ray is None:
                try:
                    self._ray = connect(self.address, str(rt.project.root),
                                        dict(rt.project.settings.forwarded))  # fmt: skip
                except ConfigError as err:
                    self._refused = err
                    raise
                self._offered = dict(self._ray.cluster_resources())
                self._task = self._ray.remote(max_retries=0)(execute)
            return self._ray

    def compute(
        self, rt: Runtime, cell: Cell, kind: Kind, inputs: dict[str, str], key: str
    ) -> Computed:
        if cell.kind not in LONG_KINDS:
            return compute_here(rt, cell, kind, inputs)
        ray = self._connect(rt)
        wanted = resources(rt, cell)
        self._check_offered(cell, wanted)
        job = job_of(rt, cell, inputs, key)
        ref = self._task.options(**wanted, name=cell.id).remote(job)
        try:
            answer = self._wait(ray, rt, cell, demand(wanted), ref)
        except _lost_errors() as err:
            raise WorkerLost(f"worker lost: {type(err).__name__}: {_first(err)}") from None
        except ray.exceptions.RayTaskError as err:
            raise HarnessError(f"harness bug on the worker: {_first(err)}") from None
        return _unpack(answer)

    def _wait(self, ray: Any, rt: Runtime, cell: Cell, needs: dict[str, float], ref: Any) -> Any:
        """The task's answer, polling the cluster while it is not there (see the module
        docstring); a starved cell past its limit is cancelled and gives up."""
        watch = Watch(cell.id, needs, self.limits)
        poll = max(0.2, min(POLL_S, self.limits.wait_s / 4))
        try:
            while not ray.wait([ref], timeout=poll)[0]:
                step = watch.observe(time.time(), live_offers(ray.nodes()), self.stopping)
                if step.line is not None:
                    sys.stderr.write(step.line + "\n")
                    sys.stderr.flush()
                if step.changed:
                    rt.progress.waiting(cell, step.state)
                if step.give_up is not None:
                    self.stopping = True
                    ray.cancel(ref, force=True)
                    raise ResourcesUnavailable(step.give_up)
        finally:
            if watch.state is not None:
                rt.progress.waiting(cell, None)
        return ray.get(ref)

    def _check_offered(self, cell: Cell, wanted: dict[str, Any]) -> None:
        for name in wanted.get("resources", {}):
            if self._offered.get(name, 0) < 1:
                raise ConfigError(
                    f"{cell.id}: the Ray cluster at {self.address} offers no `{name}` "
                    f"resource; start nodes that have it with `ray start --resources "
                    f"'{{\"{name}\": N}}'` (see README, Scale-out on Ray)"
                )

    def close(self) -> None:
        with self._lock:
            if self._ray is not None:
                self._ray.shutdown()
                self._ray = None


def connect(address: str, root: str, forwarded: Mapping[str, str]) -> Any:
    """Join the cluster as a driver; workers import recon from ``root`` and get the
    coordinator's ``RECON_*`` settings (never its other environment: credentials must be
    in each node's own environment)."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "executor=ray needs the `ray` package: `pip install ray` in this environment"
        ) from None
    answers(address)
    env = dict(forwarded)
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [os.environ.get("PYTHONPATH")])])
    host = address.rsplit(":", 1)[0]
    # A cluster on the loopback address: this driver is a node on it too.
    node_ip = "127.0.0.1" if host in ("127.0.0.1", "localhost") else None
    try:
        ray.init(
            address=address,
            namespace="recon",
            log_to_driver=True,
            logging_level=logging.ERROR,
            runtime_env={"env_vars": env},
            _node_ip_address=node_ip,
        )
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise ConfigError(
            f"address={address}: cannot join the Ray cluster ({_first(err)}); start it with "
            "`ray start --head` (see README, Scale-out on Ray)"
        ) from None
    _only_ray_lines()
    sys.stderr.write(f"[recon] executor ray: joined {address}, {_offer(ray)}\n")
    return ray


def answers(address: str, timeout: float = REACH_S) -> None:
    """Refuse, within ``timeout``, a ``host:port`` no cluster answers on (``auto`` and
    ``ray://`` addresses are Ray's to resolve)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            return
    except OSError as err:
        why = f"no answer within {timeout:g} s" if isinstance(err, TimeoutError) else (
            (err.strerror or str(err)).lower())  # fmt: skip
    raise ConfigError(
        f"address={address}: no Ray cluster answers there ({why}); start "
        f"its head with `ray start --head --port={port}`, or give the head's address (see "
        "README, Scale-out on Ray)"
    )


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _only_ray_lines() -> None:
    """Of what Ray sends the driver, pass on Ray's own lines (the autoscaler's events, such
    as an infeasible or pending demand, and the raylet's), each as ``[ray] …`` on stderr;
    the workers' output (every cell's chatter) stays in the nodes' logs. Where this Ray has
    no such hook, all of it is passed on, as Ray does by default."""
    try:
        from ray._private.worker import filter_autoscaler_events as events
        from ray._private.worker import global_worker_stdstream_dispatcher as dispatcher
    except ImportError:
        return

    def show(data: dict[str, Any]) -> None:
        pid = data.get("pid")
        if pid not in ("autoscaler", "raylet"):
            return
        lines = data.get("lines") or []
        sys.stderr.write(
            "".join(
                ray_line(str(pid), str(text))
                for text in (events(lines) if pid == "autoscaler" else lines)
            )
        )
        sys.stderr.flush()

    dispatcher.remove_handler("ray_print_logs")
    dispatcher.remove_handler("recon_ray_lines")  # joined before, in this process
    dispatcher.add_handler("recon_ray_lines", show)


def ray_line(source: str, text: str) -> str:
    """``[ray] (autoscaler) Error: No available node types can fulfill …`` (colours cut)."""
    text = ANSI.sub("", text).strip()
    return f"[ray] ({source}) {text}\n" if text else ""


def _offer(ray: Any) -> str:
    found = ray.cluster_resources()
    shown = [f"{found.get('CPU', 0):g} CPU"]
    shown += [f"{found[name]:g} {name}" for name in CUSTOM if name in found]
    return ", ".join(shown)


def job_of(rt: Runtime, cell: Cell, inputs: dict[str, str], key: str) -> CellJob:
    project = rt.project
    return CellJob(
        root=str(project.root),
        store_root=str(project.store_root),
        sealed_root=str(project.sealed_root) if project.sealed_root else None,
        verify_reads=project.verify_reads,
        settings=project.settings,
        kind=cell.kind,
        name=cell.name,
        params=cell.params,
        context=cell.context,
        key=key,
        code=rt.code(cell.kind),
        inputs=inputs,
    )


def _unpack(answer: Computed | Fault | Refused) -> Computed:
    if isinstance(answer, Fault):
        kind = CorruptObject if answer.corrupt else MissingObject
        raise kind(answer.digest, answer.message)
    if isinstance(answer, Refused):
        raise HarnessError(answer.message)
    return answer


def _first(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__
