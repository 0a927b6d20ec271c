"""A real multi-node Ray cluster on this one machine, for the node-loss tests (issue 29).

The tests' loopback cluster (:mod:`tests.pipeline.raycluster`) cannot take a second node:
Ray either refuses to join it or rewrites 127.0.0.1 to the host's interface address. So
this cluster lives in a network namespace the tests make for themselves (``ip netns add
recon-…``): a veth pair whose one end holds an address of 10.231.0.0/24 per node (never
the host's own address), loopback up, nothing routed out. The head (no CPUs: it only
serves the cluster and the driver), every worker node (``ray start --address=…
--node-ip-address=10.231.0.N --block``, each in a session of its own) and the driver (the
doit build, :meth:`NetCluster.argv`) all run in it by ``ip netns exec``. Docker is reached
over its unix socket (the mount namespace is the host's), chromium still gets its own empty
namespace inside this one (:mod:`recon.render.netns`).

A node is lost by SIGKILL to its raylet's pid (:meth:`NetCluster.kill`), as an operator
would; its other processes are then stopped by process group. Teardown stops every node
and the head the same way (never ``ray stop``), then deletes the namespace by the name it
made.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from tests.conftest import Build, doit_env
from tests.pipeline.raycluster import RAY, START_TIMEOUT_S, STARTS, _session, _stop, cluster_env

SUBNET = "10.231.0"
PORT = 6379  # the namespace is the cluster's own: no other listener there
HEAD_IP = f"{SUBNET}.1"
RUN_S = 900  # no build of one case takes more than a few minutes, even on a loaded machine
# A lost node (its raylet refuses at once) is declared dead after 5 checks 1 s apart (Ray's
# default: 3 s apart); a live node on a loaded machine still has Ray's 10 s to answer each.
HEALTH = {"RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "5"}


def netns_unavailable() -> str | None:
    """Why this machine cannot make a network namespace with a veth pair (the exact error),
    or None."""
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    name = f"recon-probe-{secrets.token_hex(3)}"
    try:
        veth = ["ip", "-n", name, "link", "add", "v0", "type", "veth", "peer", "v1"]
        for argv in (["ip", "netns", "add", name], veth):
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                return f"`{' '.join(argv)}` failed: {done.stderr.strip()}"
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True, check=False)
    return None


@dataclass
class Node:
    name: str
    ip: str
    proc: subprocess.Popen[bytes]
    log: IO[bytes]
    log_path: Path
    browser: int = 0
    killed: float | None = None  # time.monotonic() of the SIGKILL to its raylet

    def pids(self) -> list[int]:
        return _session(self.proc.pid)

    def raylet(self) -> int | None:
        """The pid of this node's raylet (``…/core/src/ray/raylet/raylet``)."""
        for pid in self.pids():
            if _argv0(pid).endswith(b"/raylet"):
                return pid
        return None

    def running(self, prefix: bytes) -> bool:
        """A worker of this node runs a task whose name starts with ``prefix`` (Ray names
        the process ``ray::<task name>`` while it runs one)."""
        return any(_argv0(pid).startswith(b"ray::" + prefix) for pid in self.pids())


def _argv0(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
    except OSError:
        return b""


@dataclass
class NetCluster:
    ns: str
    folder: Path
    env: dict[str, str]  # what every node and the driver need (token, health checks)
    head: Node | None = None
    nodes: list[Node] = field(default_factory=list)  # the live worker nodes
    spawned: list[Node] = field(default_factory=list)  # every node started, the head too
    _next: int = 2

    @property
    def address(self) -> str:
        return f"{HEAD_IP}:{PORT}"

    def argv(self, *argv: str) -> list[str]:
        """``argv`` run inside the cluster's namespace."""
        return ["ip", "netns", "exec", self.ns, *argv]

    def start_head(self) -> None:
        def head() -> Node:
            return self._spawn("head", HEAD_IP, ["--head", f"--port={PORT}", "--num-cpus=0",
                                                 "--include-dashboard=false"])  # fmt: skip

        self.head = self._ready(head(), head)

    def add_nodes(self, count: int, cpus: int = 1, browser: int = 0) -> list[Node]:
        """``count`` worker nodes joined to the head, each with its own address;
        ``browser`` is the ``browser`` resource each offers."""

        def node() -> Node:
            ip = f"{SUBNET}.{self._next}"
            self._next += 1
            subprocess.run(["ip", "-n", self.ns, "addr", "add", f"{ip}/24", "dev", "v0"],
                           check=True)  # fmt: skip
            offered = json.dumps({"browser": browser} if browser else {})
            found = self._spawn(f"node{self._next - 1}", ip, [f"--address={self.address}",
                                f"--num-cpus={cpus}", f"--resources={offered}"])  # fmt: skip
            found.browser = browser
            return found

        started = []
        for _ in range(count):  # one at a time: a loaded head registers one sooner
            started.append(self._ready(node(), node))
            self.nodes.append(started[-1])
        return started

    def _ready(self, node: Node, again: Callable[[], Node]) -> Node:
        """``node`` once started; Ray gives a raylet a fixed 30 s to register, which a busy
        machine can miss: then it is stopped and ``again`` starts another, STARTS in all."""
        for start in range(1, STARTS + 1):
            try:
                _wait_started(node)
                return node
            except RuntimeError:
                _stop(node.proc)
                if start == STARTS:
                    raise
                node = again()
        raise AssertionError("unreachable")

    def _spawn(self, name: str, ip: str, args: list[str]) -> Node:
        temp = self.folder / f"{name}.{len(self.spawned)}"  # a start again has its own
        temp.mkdir()
        argv = [str(RAY), "start", "--block", f"--node-ip-address={ip}", *args,
                "--object-store-memory=100000000", f"--plasma-directory={temp}",
                f"--temp-dir={temp / 'r'}", "--disable-usage-stats"]  # fmt: skip
        log = open(temp / "node.log", "wb")  # noqa: SIM115 (closed at teardown)
        proc = subprocess.Popen(self.argv(*argv), env={**os.environ, **self.env}, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
        node = Node(name, ip, proc, log, temp / "node.log")
        self.spawned.append(node)
        return node

    def kill(self, node: Node) -> None:
        """The node lost: SIGKILL to its raylet, nothing more. Its other processes are
        stopped at teardown (every spawned node is): stopping them here took up to 20 s,
        in which a resubmitted cell could run and finish elsewhere before a test that
        loses it again could find it."""
        pid = node.raylet()
        assert pid is not None, f"{node.name} has no raylet"
        os.kill(pid, signal.SIGKILL)
        node.killed = time.monotonic()
        self.nodes.remove(node)

    def stop(self, node: Node) -> None:
        """A node stopped (all its processes, by process group)."""
        _stop(node.proc)
        self.nodes.remove(node)

    def keep(self, browsers: int, plain: int = 0) -> None:
        """Exactly ``browsers`` live nodes with one ``browser`` and ``plain`` without (1 CPU
        each): the live ones a test before left are kept, the others stopped or started."""
        for wanted, has in ((browsers, 1), (plain, 0)):
            mine = [n for n in self.nodes if n.browser == has]
            for node in mine[wanted:]:
                self.stop(node)
            if len(mine) < wanted:
                self.add_nodes(wanted - len(mine), cpus=1, browser=has)


def _wait_started(node: Node) -> None:
    log = node.log_path
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if node.proc.poll() is not None:
            raise RuntimeError(f"{node.name}: ray start exited:\n{log.read_text()[-3000:]}")
        if b"Ray runtime started" in log.read_bytes():
            return
        time.sleep(0.3)
    raise RuntimeError(f"{node.name}: ray start did not finish in {START_TIMEOUT_S} s")


class Running:
    """A build inside the cluster's namespace; its stderr read as it comes."""

    took: float = 0.0  # wall seconds, once ended

    def __init__(self, cluster: NetCluster, project: Path, *args: str) -> None:
        argv = cluster.argv(sys.executable, "-m", "doit", "-n", "2", "-P", "thread",
                            "executor=ray", f"address={cluster.address}", *args)  # fmt: skip
        self.proc = subprocess.Popen(
            argv, cwd=project, env={**doit_env(project), **cluster.env}, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        self.began = time.monotonic()
        self.lines: list[str] = []
        self.said: list[tuple[float, str]] = []  # (time.monotonic(), line)
        self.out = ""
        self._readers = [threading.Thread(target=self._err, daemon=True),
                         threading.Thread(target=self._out, daemon=True)]  # fmt: skip
        for reader in self._readers:
            reader.start()

    def _err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.said.append((time.monotonic(), line))
            self.lines.append(line)

    def _out(self) -> None:
        assert self.proc.stdout is not None
        self.out = self.proc.stdout.read()

    @property
    def err(self) -> str:
        return "".join(self.lines)

    def line(self, prefix: str) -> str:
        """The first stderr line starting with ``prefix``, once it is out."""
        deadline = time.monotonic() + RUN_S
        while time.monotonic() < deadline and self.proc.poll() is None:
            found = [ln for ln in list(self.lines) if ln.startswith(prefix)]
            if found:
                return found[0]
            time.sleep(0.1)
        raise AssertionError(f"no line {prefix!r} before the build ended:\n{self.end().stderr}")

    def end(self) -> Build:
        try:
            self.proc.wait(timeout=RUN_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.took = time.monotonic() - self.began
        for reader in self._readers:
            reader.join(timeout=60)
        return Build(self.proc.returncode, self.out, self.err)


def kill_running(cluster: NetCluster, run: Running, task: str) -> Node:
    """The node whose worker runs a task named ``task…``, lost (its raylet SIGKILLed) as
    soon as it is found running there."""
    deadline = time.monotonic() + RUN_S
    while time.monotonic() < deadline and run.proc.poll() is None:
        for node in list(cluster.nodes):
            if node.running(task.encode()):
                cluster.kill(node)
                return node
        time.sleep(0.05)
    raise AssertionError(f"{task} never ran on a node:\n{run.end().stderr}")


@contextmanager
def net_cluster() -> Iterator[NetCluster]:
    """The namespace and a started head; add nodes with :meth:`NetCluster.add_node`."""
    ns = f"recon-{os.getpid()}-{secrets.token_hex(3)}"
    folder = Path(tempfile.mkdtemp(prefix="rn-", dir="/tmp"))  # short: unix socket paths
    env = {**cluster_env(folder), **HEALTH}
    env.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")  # a real cluster, on the namespace's addresses
    cluster = NetCluster(ns, folder, env)
    try:
        _make_namespace(ns)
        cluster.start_head()
        yield cluster
    finally:
        for node in reversed(cluster.spawned):  # the head last
            _stop(node.proc)
            node.log.close()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        subprocess.run(["rm", "-rf", str(folder)], check=False)


def _make_namespace(ns: str) -> None:
    steps = [["ip", "netns", "add", ns], ["ip", "-n", ns, "link", "set", "lo", "up"],
             ["ip", "-n", ns, "link", "add", "v0", "type", "veth", "peer", "v1"],
             ["ip", "-n", ns, "addr", "add", f"{HEAD_IP}/24", "dev", "v0"],
             ["ip", "-n", ns, "link", "set", "v0", "up"],
             ["ip", "-n", ns, "link", "set", "v1", "up"]]  # fmt: skip
    for argv in steps:
        subprocess.run(argv, check=True, capture_output=True)
