"""A real Ray cluster on 127.0.0.1 for tests: ``ray start --head --block`` in its own
session, two worker processes (2 CPUs, 2 ``browser``, and ``docker`` when asked), token
authentication with a token
of its own, its temp folder and object store files in a temporary folder. Stopped by
killing every process group of its own session (Ray starts each worker in a process group
of its own; never ``ray stop``, which would stop other clusters)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from tests.conftest import free_port

RAY = Path(sys.executable).with_name("ray")
START_TIMEOUT_S = 300


@dataclass(frozen=True)
class Cluster:
    address: str
    env: dict[str, str]  # what a driver (the doit coordinator) needs to join it
    head: subprocess.Popen[bytes]
    folder: Path

    def worker_pids(self) -> list[int]:
        """The cluster's Python worker processes (Ray names them ``ray::…``)."""
        found = []
        for pid in _session(self.head.pid):
            try:
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if cmd.startswith(b"ray::") and b"Agent" not in cmd:
                found.append(pid)
        return found


def _session(sid: int) -> list[int]:
    """The processes of session ``sid``: the head's own, begun with ``start_new_session``."""
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if os.getsid(int(entry.name)) == sid:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _groups(sid: int) -> set[int]:
    """The process groups of session ``sid`` (the head's, and one per Ray worker)."""
    found = set()
    for pid in _session(sid):
        with contextlib.suppress(OSError):
            found.add(os.getpgid(pid))
    return found


def cluster_env(folder: Path) -> dict[str, str]:
    token = folder / "token"
    token.write_text(secrets.token_hex(32))
    return {
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN_PATH": str(token),
        "RAY_USAGE_STATS_ENABLED": "0",
        # Resolve 127.0.0.1 as itself (not this host's interface address): loopback only.
        "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0",
    }


STARTS = 3  # Ray gives its raylet a fixed 30 s to register: on a busy machine, start again


@contextmanager
def ray_cluster(
    cpus: int = 2, docker: int = 0, node_env: dict[str, str] | None = None
) -> Iterator[Cluster]:
    """The cluster; ``docker`` is the ``docker`` resource its node offers, ``node_env`` what
    its node's own environment adds (credentials are the node's, never the driver's)."""
    for start in range(1, STARTS + 1):
        cluster, log = _start(cpus, docker, node_env or {})
        try:
            _wait_ready(cluster)
            break
        except RuntimeError:
            _stop(cluster.head)
            log.close()
            subprocess.run(["rm", "-rf", str(cluster.folder)], check=False)
            if start == STARTS:
                raise
    try:
        yield cluster
    finally:
        _stop(cluster.head)
        log.close()
        subprocess.run(["rm", "-rf", str(cluster.folder)], check=False)


def _start(cpus: int, docker: int, node_env: dict[str, str]) -> tuple[Cluster, IO[bytes]]:
    folder = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))  # short: unix socket paths
    env = cluster_env(folder)
    port = free_port()
    offered = {"browser": cpus, **({"docker": docker} if docker else {})}
    argv = [str(RAY), "start", "--head", "--block", "--node-ip-address=127.0.0.1",
            f"--port={port}", f"--num-cpus={cpus}", f"--resources={json.dumps(offered)}",
            "--object-store-memory=200000000", f"--plasma-directory={folder}",
            f"--temp-dir={folder / 'r'}", "--disable-usage-stats"]  # fmt: skip
    log = open(folder / "head.log", "wb")  # noqa: SIM115 (closed by the caller)
    head = subprocess.Popen(argv, env={**os.environ, **node_env, **env}, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
    return Cluster(f"127.0.0.1:{port}", env, head, folder), log


def _wait_ready(cluster: Cluster) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if cluster.head.poll() is not None:
            raise RuntimeError((cluster.folder / "head.log").read_text()[-3000:])
        if b"Ray runtime started" in (cluster.folder / "head.log").read_bytes():
            return
        time.sleep(0.5)
    raise RuntimeError(f"ray start did not finish in {START_TIMEOUT_S} s")


def _stop(head: subprocess.Popen[bytes]) -> None:
    """SIGTERM to every process group of the cluster's session; SIGKILL what is left
    after 20 s."""
    for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
        groups = _groups(head.pid)
        if not groups:
            return
        for pgid in groups:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and _session(head.pid):
            time.sleep(0.2)
            head.poll()
        if not _session(head.pid):
            head.poll()
            return
