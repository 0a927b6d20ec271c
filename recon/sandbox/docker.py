"""The docker backend: one attempt in one container, the Candidate boundary of DESIGN §5.1.

The container has ``--network none``, a read-only root, no capabilities, no new privileges,
and the entry's cpus, memory (= memory + swap), pids and disk (a tmpfs of ``disk_mb`` at
``/sandbox`` holding the workspace, ``$HOME`` and ``/tmp``). pid 1 is docker's init
sleeping; every step is an exec in it:

1. the workspace arrives as a tar on a read-only staging mount and is unpacked (uid 1000);
2. the egress bridge starts (as the agent's uid, the only one the proxy's socket admits) on
   127.0.0.1:3128, forwarding to the host proxy's unix socket on the same staging mount;
   the agent gets ``HTTPS_PROXY``; with an offline dependency store (mounted read-only at
   ``/deps``) its npm registry starts on 127.0.0.1:4873, and npm and pip are configured
   (environment) to install from it only; the entry's declared files are at ``/entry``
   (a read-only copy, ``entry_files.py``);
3. the agent runs (uid 1000) under the wall time the harness enforces and an output cap:
   past the cap the harness stops reading and stops the agent;
4. the agent's trace file, if the entry names one, is read out (capped); processes the agent
   left behind, the bridge and the registry are killed from the host (freeze the container,
   SIGKILL by uid, thaw);
5. the egress proxy stops and its socket is removed; the contract's build step runs offline
   (the registry restarted, no bridge, no socket) with the time that is left; leftovers
   killed;
6. the output is checked against ``budget.output_files`` and ``budget.output_depth`` in the
   container, then streamed out as a tar and taken in on the host by ``unpack_output``, the
   rule the native backend applies too (``outputs.py``): links inside the output become
   copies; a refused output (a name that is not UTF-8, a fifo, a device, a link leading out,
   a file over the cap, ...) is ``ungradeable``, its reason naming the path. Exec control and
   output reading are ``container.py``'s.

With a model gateway (``gateway=``, ``gateway.py``), it starts on the host with the proxy,
its socket beside the proxy's; a second bridge on 127.0.0.1:``GATEWAY_PORT`` reaches it;
the agent gets its base-URL and token variables; it stops when the agent step ends (step
4), and its recording is the run's ``gateway``. An attempt the gateway stopped (a spent
budget, the gateway's harness failure) ends there, without the build step.

Every exception becomes an attempt: the engine's and the environment's are ``harness:``,
any other is ``harness bug: <Exception>`` (``attempt.py``).

Outcomes (DESIGN §7): ``valid``, ``missing`` (the agent failed or was stopped),
``ungradeable`` (the build failed or left nothing), ``timeout`` (the time limit, or the
model budget: ``model budget: ...``), and ``harness_failure`` for anything the engine or
the harness caused — never reported as a model failure.
"""

from __future__ import annotations

import contextlib
import posixpath
import shutil
import tarfile
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import docker
from docker.errors import APIError, DockerException, ImageNotFound, NotFound
from requests.exceptions import RequestException

from recon.errors import HarnessError, ReconError
from recon.model import Budget, BuildStep, Outcome
from recon.model.gateway import Recording
from recon.sandbox import engine
from recon.sandbox.attempt import AttemptRun, harness_bug, parse_trace
from recon.sandbox.container import Container, Fault
from recon.sandbox.deps import MOUNT as DEPS_MOUNT
from recon.sandbox.deps import REGISTRY_PORT
from recon.sandbox.exec_stream import STDERR, ExecStream, StreamError
from recon.sandbox.gateway import GATEWAY_PORT, AttemptGateway, GatewayPlan, agent_env, verdict
from recon.sandbox.gateway import SOCKET as GATEWAY_SOCKET
from recon.sandbox.outputs import (
    OutputCaps,
    OutputRefused,
    not_archived,
    refused,
    too_deep,
    too_many,
    unpack_output,
)
from recon.sandbox.proxy import EgressProxy
from recon.sandbox.rootfs import AGENT_UID, BRIDGE_UID

SANDBOX = "/sandbox"
WORK = "/sandbox/work"
STAGE = "/recon"
ENTRY_DIR = "/entry"  # the read-only copy of the entry's declared files (entry_files.py)
PROXY_PORT = 3128
LABEL = "recon.sandbox"
LIFETIME_MARGIN_S = 900
"""An attempt container's pid 1 sleeps 2 × the time limit (agent, then build step) plus
this: set-up, extraction and a loaded machine's delays."""
CREATED_GRACE_S = 120
FILE_CAP_MB = 64
TRACE_CAP = 16 * 1024 * 1024
_BRIDGE = Path(__file__).with_name("bridge.py")
_REGISTRY = Path(__file__).with_name("deps_registry.py")
_AGENT = f"{AGENT_UID}:{AGENT_UID}"

# Placeholders of an entry's command inside the container (the native backend uses host paths).
CONTAINER_PATHS = {
    "workspace": WORK,
    "brief": f"{WORK}/brief.md",
    "evidence": f"{WORK}/evidence",
    "python": "python3",
    "entry_dir": ENTRY_DIR,
    "trace": f"{SANDBOX}/trace/trace.json",  # where an agent writes its trajectory
}


def notice(limit_s: int) -> str:
    """The ``{notice}`` placeholder for an attempt stopped after ``limit_s`` seconds: plain
    words only (no quote, ``$``, backslash or backtick), so a template may put it inside
    double quotes of a shell command."""
    minutes = f"{limit_s // 60} min {limit_s % 60} s" if limit_s % 60 else f"{limit_s // 60} min"
    return (
        f"Notice from the harness: write the page under site/ in this folder, which is what "
        f"is built and graded. You have {limit_s} s ({minutes}) of wall-clock time; then the "
        "attempt is stopped and site/ is taken as it is. The network is off: no web host or "
        "package registry can be reached, only the offline dependency store."
    )


def container_placeholders(limit_s: int) -> dict[str, str]:
    """Every placeholder of a command template, as the docker backend fills it for an
    attempt stopped after ``limit_s`` seconds."""
    return {**CONTAINER_PATHS, "notice": notice(limit_s)}


@dataclass
class DockerRun(AttemptRun):
    """An ``AttemptRun`` plus what only the docker backend knows."""

    egress: dict[str, Any] = field(default_factory=dict)
    image_id: str = ""
    container_id: str = ""  # removed by the time the run returns
    timings: dict[str, float] = field(default_factory=dict)
    trace_file: bytes = b""  # the agent's trajectory (``trace_file=``), secrets scrubbed
    gateway: Recording | None = None  # the model gateway's recording (``gateway=``)


@dataclass(frozen=True)
class Mount:
    """A host folder mounted read-only into the container (e.g. the dependency store)."""

    source: Path
    target: str


_FAILURES = (
    Fault,
    HarnessError,
    DockerException,
    RequestException,
    OSError,
    tarfile.TarError,
    StreamError,
)
"""What the engine, the host or the environment may raise: ``harness:``. Anything else is a
``harness bug:`` (DESIGN §7: both are harness failures, never the Candidate's)."""


def run_docker(
    workspace: Path,
    command: list[str],
    budget: Budget,
    time_limit_s: int,
    image: str,
    *,
    build: BuildStep,
    out: Path,
    egress: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    secrets: Sequence[str] = (),
    mounts: Sequence[Mount] = (),
    sealed: Sequence[Path] = (),
    client: docker.DockerClient | None = None,
    file_cap_mb: int = FILE_CAP_MB,
    deps: Path | None = None,
    trace_file: str | None = None,
    gateway: GatewayPlan | None = None,
) -> DockerRun:
    """Run ``command`` on a copy of ``workspace`` in a container of ``image``, then the
    build step; unpack the build output into ``out`` (which must not exist yet).

    ``deps``: the fetched offline dependency store, mounted read-only at ``/deps``.
    ``trace_file``: a container path the agent writes its trajectory to, read back.
    ``gateway``: the attempt's model gateway, served beside the egress proxy."""
    started = time.monotonic()
    limit = min(time_limit_s, budget.wall_s)
    attempt = _Attempt(budget, limit, image, secrets, file_cap_mb, started)
    attempt.trace_path = trace_file
    try:
        if deps is not None:
            mounts = [*mounts, Mount(deps, DEPS_MOUNT)]
            attempt.registry = True
        _check_mounts(mounts, sealed)
        attempt.client = client or engine.engine_client()
        remove_stale_containers(attempt.client)
        with (
            tempfile.TemporaryDirectory(prefix="recon-sbx-") as stage,
            EgressProxy(Path(stage) / "egress.sock", list(egress), uid=AGENT_UID) as proxy,
            contextlib.ExitStack() as stack,
        ):
            attempt.proxy = proxy
            if gateway is not None:
                attempt.gateway = stack.enter_context(
                    AttemptGateway(gateway, Path(stage), uid=AGENT_UID)
                )
            attempt.allow_hosts = {rule.host for rule in proxy.rules}
            try:
                result = attempt.run(workspace, Path(stage), command, env or {}, mounts, build, out)
            except Exception as err:  # every exception becomes an attempt with a reason
                result = attempt.failed(err)
            finally:
                attempt.remove()
            result.egress = _egress(proxy)
            return result
    except Exception as err:
        return attempt.failed(err)


def remove_stale_containers(client: docker.DockerClient) -> int:
    """Remove attempt containers that are no longer running (left by an engine stop or a
    killed harness), and ones created but never started for over ``CREATED_GRACE_S`` (a
    cut between create and start); running ones may belong to a concurrent worker and
    are kept (their pid 1 ends by itself, see ``LIFETIME_MARGIN_S``)."""
    removed = 0
    now = datetime.now(UTC)
    for status in ("exited", "dead", "created"):
        filters = {"label": LABEL, "status": status}
        for container in client.containers.list(all=True, filters=filters):
            if (
                status == "created"
                and (now - _created(container)).total_seconds() < CREATED_GRACE_S
            ):
                continue
            with contextlib.suppress(NotFound):
                container.remove(force=True)
                removed += 1
    return removed


def _created(container: Any) -> datetime:
    """When the engine created ``container`` (its RFC 3339 ``Created``, nanoseconds cut)."""
    raw = str(container.attrs.get("Created", ""))
    stamp = raw.rstrip("Z").split(".")[0]
    try:
        return datetime.fromisoformat(stamp).replace(tzinfo=UTC)
    except ValueError:
        return datetime.fromtimestamp(0, UTC)


class _Attempt(Container):
    def __init__(
        self,
        budget: Budget,
        limit: int,
        image: str,
        secrets: Sequence[str],
        file_cap_mb: int,
        started: float,
    ) -> None:
        self.budget = budget
        self.limit = limit
        self.image = image
        super().__init__(log_cap=budget.output_mb * 1024 * 1024)
        self.secrets = [s for s in secrets if len(s) >= 4]
        self.caps = OutputCaps.of(budget, file_cap_mb * 1024 * 1024)
        self.started = started
        self.deadline = started + limit
        self.image_id = ""
        self.logs = b""
        self.trace_log = b""
        self.refusals: list[str] = []
        self.egress: dict[str, Any] = {}
        self.allow_hosts: set[str] = set()
        self.timings: dict[str, float] = {}
        self.registry = False
        self.trace_path: str | None = None
        self.trace_file = b""
        self.proxy: EgressProxy | None = None
        self.gateway: AttemptGateway | None = None

    # -- the steps --------------------------------------------------------------------

    def run(
        self,
        workspace: Path,
        stage: Path,
        command: list[str],
        env: Mapping[str, str],
        mounts: Sequence[Mount],
        build: BuildStep,
        out: Path,
    ) -> DockerRun:
        self._stage(workspace, stage)
        self._create(stage, mounts)
        self._lap("create")
        self._unpack()
        self._bridge()
        self._gateway_bridge()
        self._registry()
        self._lap("prepare")
        self.deadline = time.monotonic() + self.limit  # harness overhead is not the agent's
        gateway = agent_env(self.gateway.plan) if self.gateway is not None else {}
        agent = self._exec(command, _AGENT, WORK, self._env({**env, **gateway}), self.deadline)
        self.trace_log = agent.log
        self.logs = b"== agent ==\n" + self._scrub(agent.log)
        self._lap("agent")
        stopped = verdict(self.gateway.stop() if self.gateway is not None else None)
        if stopped is not None:  # the gateway's reason, whatever the agent did then
            self._read_trace()
            return self.done(*stopped, agent.code)
        if agent.code is None:
            return self.done("timeout", f"agent exceeded the time limit of {self.limit}s", None)
        self._read_trace()
        if agent.over_cap:
            mb = self.budget.output_mb
            why = f"agent wrote more than {mb} MB of output and was stopped"
            return self.done("missing", why, agent.code)
        if agent.code != 0:
            return self.done("missing", self._failed("agent", agent.code), agent.code)
        self._reap(AGENT_UID, BRIDGE_UID)  # leftovers, the bridge and the registry
        self._offline()
        if build.command:
            self._registry()
            step = self._exec(build.command, _AGENT, WORK, self._env(env), self.deadline)
            self.logs += b"\n== build ==\n" + self._scrub(step.log)
            self._lap("build")
            if step.code is None:
                return self.done(
                    "timeout", f"build step exceeded the time limit of {self.limit}s", None
                )
            if step.code != 0 or step.over_cap:
                return self.done("ungradeable", self._failed("build step", step.code), step.code)
            self._reap(AGENT_UID)
        try:
            files = self._extract(build.output, out)
        except OutputRefused as refusal:
            self._lap("extract")
            self.refusals.extend(refusal.refusals)
            return self.done("ungradeable", refusal.reason, 0)
        self._lap("extract")
        if files == 0:
            return self.done("ungradeable", f"the build left no output in {build.output}/", 0)
        return self.done("valid", "submitted a build", 0, out)

    def _stage(self, workspace: Path, stage: Path) -> None:
        stage.chmod(0o755)  # the bridge (uid 65534) must reach the socket
        with tarfile.open(stage / "workspace.tar", "w") as tar:
            tar.add(workspace, arcname=".", filter=_own_by_agent)
        shutil.copy2(_BRIDGE, stage / "bridge.py")
        shutil.copy2(_REGISTRY, stage / "deps_registry.py")

    def _create(self, stage: Path, mounts: Sequence[Mount]) -> None:
        assert self.client is not None
        b = self.budget
        volumes = {str(stage): {"bind": STAGE, "mode": "ro"}}
        volumes.update({str(m.source): {"bind": m.target, "mode": "ro"} for m in mounts})
        try:
            self.image_id = str(self.client.images.get(self.image).id)
        except ImageNotFound as err:
            raise Fault(f"sandbox image {self.image} is missing from the engine") from err
        self.container = self.client.containers.create(
            self.image,
            # pid 1 outlives every step of the attempt, but not a harness that lost the
            # engine mid-attempt: the container then stops by itself and is removed later.
            ["sleep", str(2 * self.limit + LIFETIME_MARGIN_S)],
            init=True,
            user="0:0",
            working_dir="/",
            network_mode="none",
            read_only=True,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            nano_cpus=int(b.cpus * 1e9),
            mem_limit=f"{b.memory_mb}m",
            memswap_limit=f"{b.memory_mb}m",
            pids_limit=b.pids,
            tmpfs={SANDBOX: _tmpfs(b.disk_mb)},
            volumes=volumes,
            labels={LABEL: "attempt"},
        )
        self.container.start()
        self.container.reload()

    def _unpack(self) -> None:
        script = (
            f"mkdir -p {WORK} {SANDBOX}/home {SANDBOX}/tmp {SANDBOX}/trace && "
            f"chmod 1777 {SANDBOX}/tmp && "
            f"tar -xf {STAGE}/workspace.tar -C {WORK} --no-same-owner"
        )
        step = self._exec(["sh", "-c", script], _AGENT, "/", {}, time.monotonic() + 120)
        if step.code != 0:
            tail = step.log[-500:].decode(errors="replace")
            raise Fault(
                f"could not copy the workspace in (disk budget {self.budget.disk_mb} MB?): {tail}"
            )

    def _bridge(self) -> None:
        """Start the loopback bridge to the egress proxy."""
        cmd = ["python3", f"{STAGE}/bridge.py", f"{STAGE}/egress.sock", str(PROXY_PORT)]
        self._service(cmd, "egress bridge", _AGENT)  # the socket admits the agent's uid only

    def _gateway_bridge(self) -> None:
        """Start the loopback bridge to the model gateway, when the attempt has one."""
        if self.gateway is not None:
            cmd = ["python3", f"{STAGE}/bridge.py", f"{STAGE}/{GATEWAY_SOCKET}", str(GATEWAY_PORT)]
            self._service(cmd, "gateway bridge", _AGENT)

    def _offline(self) -> None:
        """The build step runs offline: the proxy stops and its socket is removed."""
        if self.proxy is not None:
            self.proxy.close()

    def _registry(self) -> None:
        """Start the offline store's npm registry, when there is a store."""
        if self.registry:
            cmd = ["python3", f"{STAGE}/deps_registry.py", f"{DEPS_MOUNT}/npm", str(REGISTRY_PORT)]
            self._service(cmd, "offline npm registry", f"{BRIDGE_UID}:{BRIDGE_UID}")

    def _read_trace(self) -> None:
        """Read the agent's trace file (at most ``TRACE_CAP`` bytes; absent: empty)."""
        if not self.trace_path:
            return
        api = self._api()
        cmd = ["sh", "-c", 'head -c "$2" -- "$1" 2>/dev/null; true', "sh", self.trace_path,
               str(TRACE_CAP)]  # fmt: skip
        ex = self._exec_create(cmd, user=_AGENT)
        data, _ = ExecStream(api, ex["Id"]).read_all(TRACE_CAP)
        self.trace_file = self._scrub(data)

    def _extract(self, output: str, out: Path) -> int:
        """Stream the output folder out as a tar; take it into ``out`` (``unpack_output``). The
        caps are checked in the container first (``find`` stops at the first entry past
        one), so a flood of files is refused before anything is archived or sent."""
        output = posixpath.normpath(output)
        expected = posixpath.normpath(posixpath.join(WORK, output))
        api = self._api()
        cmd = ["sh", "-c", _EXTRACT, "sh", output, expected, str(self.caps.files),
               str(self.caps.depth)]  # fmt: skip
        ex = self._exec_create(cmd, user=_AGENT, workdir=WORK)
        with tempfile.SpooledTemporaryFile(max_size=16 * 1024 * 1024) as spool:
            stream = ExecStream(api, ex["Id"])
            try:
                errors = self._spool(stream.frames(), spool)
            finally:
                stream.close()
            code = self._exit_code(ex["Id"])
            if code is None:
                raise Fault("the output archive ended but its exec did not")
            return self._unpack_spool(spool, code, errors, output, out)

    def _spool(self, frames: Iterator[tuple[int, bytes]], spool: IO[bytes]) -> bytes:
        """The archive (stdout) into ``spool``, up to the disk budget; stderr returned."""
        total, cap, errors = 0, self.budget.disk_mb * 1024 * 1024 + 1024 * 1024, b""
        for stream, data in frames:
            if stream == STDERR:
                errors += data[: max(0, 4096 - len(errors))]
                continue
            total += len(data)
            if total > cap:
                raise Fault("the output stream is larger than the disk budget")
            spool.write(data)
        return errors

    def _unpack_spool(
        self, spool: IO[bytes], code: int, errors: bytes, output: str, out: Path
    ) -> int:
        if code == 3:
            return 0
        if code == 4:
            raise refused([f"{output}: the output folder is a symlink or lies behind one"])
        if code == 5:
            raise refused([f"{output}: the output is not a folder"])
        if code == 6:
            raise too_many(output, self.caps)
        if code == 7:
            raise too_deep(output, self.caps)
        if code not in (0, 1, 2):  # tar: 1 files changed, 2 some could not be read
            why = errors[-300:].decode(errors="replace")
            raise Fault(f"reading the output failed ({code}): {why}")
        spool.seek(0)
        with tarfile.open(fileobj=spool, mode="r:") as tar:
            return unpack_output(tar, output, out, self.caps, not_archived(errors))

    # -- helpers ------------------------------------------------------------------------

    def _env(self, extra: Mapping[str, str]) -> dict[str, str]:
        proxy = f"http://127.0.0.1:{PROXY_PORT}"
        # The container's own loopback bypasses the proxy, unless the allow-list names the
        # host's 127.0.0.1 (a scripted model server in tests): then that goes through it.
        local = "localhost" if "127.0.0.1" in self.allow_hosts else "localhost,127.0.0.1"
        return {
            **_OFFLINE_ENV,
            "HOME": f"{SANDBOX}/home",
            "TMPDIR": f"{SANDBOX}/tmp",
            "LANG": "C.UTF-8",
            "TZ": "UTC",
            "HTTP_PROXY": proxy,
            "HTTPS_PROXY": proxy,
            "http_proxy": proxy,
            "https_proxy": proxy,
            "NO_PROXY": local,
            "no_proxy": local,
            **extra,
        }

    def _failed(self, what: str, code: int | None) -> str:
        reason = f"{what} exited with status {code}"
        if what == "agent":
            reason += " before submitting"
        if self._oom_kills() > self.oom_before:
            reason += f"; the memory budget of {self.budget.memory_mb} MB was exceeded (OOM kill)"
        return reason

    def _scrub(self, log: bytes) -> bytes:
        for value in self.secrets:
            log = log.replace(value.encode(), b"***")
        return log

    def _lap(self, name: str) -> None:
        now = round(time.monotonic() - self.started, 3)
        self.timings[name] = round(now - sum(self.timings.values()), 3)

    def failed(self, err: Exception) -> DockerRun:
        known = isinstance(err, _FAILURES)
        reason = _harness_reason(err, self.image) if known else harness_bug(err)
        return self.done("harness_failure", reason, None)

    def done(
        self, outcome: Outcome, reason: str, code: int | None, out: Path | None = None
    ) -> DockerRun:
        took = round(time.monotonic() - self.started, 3)
        recording = self.gateway.stop() if self.gateway is not None else None
        return DockerRun(
            outcome, reason, code, took, self.logs, out, parse_trace(self.trace_log),
            refusals=list(self.refusals), egress=self.egress, image_id=self.image_id,
            container_id=self.container.id if self.container is not None else "",
            timings=dict(self.timings), trace_file=self.trace_file, gateway=recording,
        )  # fmt: skip


# The output check, in the container: exists (3; a dangling link is a link: 4), is where it
# should be (4), is a folder (5), holds at most $3 entries (6), none more than $4 levels
# deep (7); then the archive.
_EXTRACT = (
    'p=$(realpath -e -- "$1" 2>/dev/null) || { [ -L "$1" ] && exit 4; exit 3; }; '
    '[ "$p" = "$2" ] || exit 4; [ -d "$p" ] || exit 5; '
    'n=$(find "$1" -mindepth 1 2>/dev/null | head -n "$(($3 + 1))" | wc -l); '
    '[ "$n" -le "$3" ] || exit 6; '
    '[ -z "$(find "$1" -mindepth "$(($4 + 1))" -print -quit 2>/dev/null)" ] || exit 7; '
    'exec tar -cf - -- "$1"'
)

# npm and pip install from the offline store only (DESIGN §5.1). npm talks to the store's
# registry on the container's loopback, directly; a missing package is a 404 at once.
_OFFLINE_ENV = {
    "npm_config_registry": f"http://127.0.0.1:{REGISTRY_PORT}/",
    "npm_config_noproxy": "localhost,127.0.0.1",
    "npm_config_fetch_retries": "0",
    "npm_config_audit": "false",
    "npm_config_fund": "false",
    "npm_config_update_notifier": "false",
    "PIP_NO_INDEX": "1",
    "PIP_FIND_LINKS": f"{DEPS_MOUNT}/wheels",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    "PIP_BREAK_SYSTEM_PACKAGES": "1",  # Debian's python3: user installs into $HOME
}


def _own_by_agent(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = AGENT_UID
    info.uname = info.gname = ""
    return info


def _tmpfs(disk_mb: int) -> str:
    owner = f"uid={AGENT_UID},gid={AGENT_UID}"
    return f"rw,exec,nosuid,nodev,size={disk_mb}m,{owner},mode=0755"


def _check_mounts(mounts: Sequence[Mount], sealed: Sequence[Path]) -> None:
    """Sealed material never enters the Candidate boundary (DESIGN §5.1)."""
    for mount in mounts:
        src = mount.source.resolve()
        for root in sealed:
            root = root.resolve()
            if src == root or root in src.parents or src in root.parents:
                raise Fault(f"refusing to mount {mount.source}: it overlaps sealed material {root}")


def _egress(proxy: EgressProxy) -> dict[str, Any]:
    log = proxy.log
    return {
        "allow": [str(rule) for rule in proxy.rules],
        "allowed": log.allowed,
        "refused": log.refused,
        "failed": log.failed,
        "events": list(log.events),
        "dropped_events": log.dropped_events,
    }


def _harness_reason(err: BaseException, image: str) -> str:
    if isinstance(err, ImageNotFound):
        return f"harness: sandbox image {image} is missing from the engine; build it first"
    if isinstance(err, APIError):
        return f"harness: docker engine error: {err.explanation or err}"[:600]
    if isinstance(err, (RequestException, OSError)) and not isinstance(err, ReconError):
        return f"harness: docker engine not answering ({type(err).__name__}: {str(err)[:200]})"
    return f"harness: {str(err)[:600]}"
