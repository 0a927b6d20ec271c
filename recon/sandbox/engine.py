"""The Docker engine the formal backend runs on: find it, or start it when we may.

``engine_client()`` answers a client that has just answered ``ping()``, or raises a
``HarnessError`` naming the socket and the fix. ``ensure_engine()`` is for ``make test``,
CI and the demo: when no engine answers and we are root, it starts Debian's ``dockerd``
without a bridge or iptables rules (containers always run with ``--network none``), with a
pidfile and a log file, and waits a bounded time for it to answer.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import docker
from docker.errors import DockerException

from recon.errors import HarnessError

DEFAULT_SOCKET = "unix:///var/run/docker.sock"
DOCKERD_ARGS = ("--bridge=none", "--iptables=false", "--ip6tables=false")
CGROUP_ROOT = Path("/sys/fs/cgroup")


def engine_url() -> str:
    """The engine address: ``DOCKER_HOST`` when set, else the standard unix socket."""
    return os.environ.get("DOCKER_HOST") or DEFAULT_SOCKET


def engine_client(url: str | None = None, timeout_s: int = 120) -> docker.DockerClient:
    """A client of a running engine, checked with ``ping()``."""
    url = url or engine_url()
    try:
        client = docker.DockerClient(base_url=url, timeout=timeout_s)
        client.ping()
    except (DockerException, OSError) as err:
        raise HarnessError(
            f"docker engine not answering at {url}: run `make test`, which starts it "
            f"(or `make engine`) ({_short(err)})"
        ) from err
    return client


def engine_answers(url: str | None = None) -> bool:
    try:
        engine_client(url, timeout_s=5).close()
    except HarnessError:
        return False
    return True


@dataclass(frozen=True)
class EngineStart:
    """What ``ensure_engine`` did: ``started`` is False when an engine already answered."""

    url: str
    started: bool
    pid: int | None = None
    log: Path | None = None
    took_s: float = 0.0


def ensure_engine(url: str | None = None, wait_s: float = 60.0, *, state_dir: Path) -> EngineStart:
    """Answer the running engine, or start ``dockerd`` (root only) and wait for it.

    On the standard socket dockerd keeps its usual data root; on any other unix socket
    (tests, a private engine) its data, exec root and pidfile live in ``state_dir``
    (``RECON_ENGINE_STATE``).
    """
    url = url or engine_url()
    if engine_answers(url):
        return EngineStart(url, started=False)
    if not url.startswith("unix://"):
        raise HarnessError(f"docker engine not answering at {url}; start it there")
    dockerd = shutil.which("dockerd")
    if dockerd is None:
        raise HarnessError(
            f"docker engine not answering at {url} and dockerd is not installed: "
            "`apt-get install docker.io` (make test does)"
        )
    if os.geteuid() != 0:
        raise HarnessError(f"docker engine not answering at {url}, and only root may start one")
    started = time.monotonic()
    deadline = started + wait_s
    state_dir.mkdir(parents=True, exist_ok=True)
    log = state_dir / "dockerd.log"
    pidfile = state_dir / "dockerd.pid"
    running = _running_pid(pidfile)
    if running is not None:  # started by someone else a moment ago: wait for it
        _wait(url, deadline, None, log)
        return EngineStart(url, started=False, pid=running, log=log)
    args = [dockerd, *DOCKERD_ARGS, f"--pidfile={pidfile}"]
    if url != DEFAULT_SOCKET:
        args += [f"--host={url}", f"--data-root={state_dir / 'data'}",
                 f"--exec-root={state_dir / 'exec'}"]  # fmt: skip
    with log.open("ab") as out:
        proc = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    _wait(url, deadline, proc, log)
    took = round(time.monotonic() - started, 2)
    return EngineStart(url, started=True, pid=proc.pid, log=log, took_s=took)


def _wait(url: str, deadline: float, proc: subprocess.Popen[bytes] | None, log: Path) -> None:
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise HarnessError(
                f"dockerd exited with status {proc.returncode} while starting; see {log}"
            )
        if engine_answers(url):
            return
        time.sleep(0.25)
    raise HarnessError(f"dockerd did not answer at {url} in time; see {log}")


def _running_pid(pidfile: Path) -> int | None:
    """The pid in ``pidfile`` if that process lives; a stale pidfile is removed (dockerd
    refuses to start over one)."""
    try:
        pid = int(pidfile.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        pidfile.unlink(missing_ok=True)
        return None
    return pid


# -- the host's view of a container's processes (root only) ---------------------------


def cgroup_dir(pid: int, controller: str) -> Path:
    """The host folder of ``pid``'s cgroup for ``controller`` (cgroup v1 or v2)."""
    unified = None
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        hierarchy, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return CGROUP_ROOT / controller / path.lstrip("/")
        if hierarchy == "0" and not controllers:
            unified = CGROUP_ROOT / path.lstrip("/")
    if unified is None or not (unified / "cgroup.procs").exists():
        raise HarnessError(f"no {controller} cgroup found for pid {pid}")
    return unified


def uid_pids(init_pid: int, uid: int) -> list[int]:
    """Processes of ``uid`` in the cgroup of a container whose init is ``init_pid``."""
    procs = (cgroup_dir(init_pid, "pids") / "cgroup.procs").read_text().split()
    found = []
    for pid in map(int, procs):
        with contextlib.suppress(OSError, IndexError, ValueError):
            status = Path(f"/proc/{pid}/status").read_text()
            real = next(line for line in status.splitlines() if line.startswith("Uid:"))
            if int(real.split()[1]) == uid:
                found.append(pid)
    return found


def kill_uid(init_pid: int, uid: int) -> int:
    """SIGKILL every process of ``uid`` in the container (pause it first: no new forks)."""
    killed = 0
    for pid in uid_pids(init_pid, uid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            killed += 1
    return killed


def wait_uid_gone(init_pid: int, uid: int, wait_s: float = 5.0) -> bool:
    deadline = time.monotonic() + wait_s
    while uid_pids(init_pid, uid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def oom_kills(init_pid: int) -> int:
    """How many processes the OOM killer has killed in the container so far."""
    folder = cgroup_dir(init_pid, "memory")
    for name in ("memory.oom_control", "memory.events"):
        with contextlib.suppress(FileNotFoundError):
            for line in (folder / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    return 0


def _short(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:200] if text else type(err).__name__
