"""One attempt container as the harness drives it: execs under a deadline and an output
cap, helpers started and awaited, and the Candidate's processes frozen and killed.

``Container`` is the engine-facing half of the docker backend (``docker.py`` holds the
attempt's steps). Every engine answer it reads is one the engine may still be settling (an
exec reported running after its output ended, a container still paused just after
``unpause``, or marked paused again by the freeze's late event): it waits a bounded
``ENGINE_SLACK_S`` for the settled answer, and anything else it cannot make sense of is a
``Fault``: the harness's failure, never the Candidate's.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import docker
from docker.errors import APIError, DockerException, NotFound
from requests.exceptions import RequestException

from recon.sandbox import engine
from recon.sandbox.exec_stream import ExecStream, StreamError
from recon.sandbox.rootfs import AGENT_UID

T = TypeVar("T")

ENGINE_SLACK_S = 60.0
"""How long the engine may take to report a state change it has already made (an exec's
end, an unpause) before the harness calls it a fault: minutes only on a very busy host."""


class Fault(Exception):
    """A harness or engine failure inside an attempt: becomes ``harness_failure``."""


@dataclass
class Step:
    code: int | None  # None: stopped at the deadline
    log: bytes
    over_cap: bool = False


class Container:
    """The engine side of one attempt container (``client`` and ``container`` are set once
    it exists); ``log_cap`` bounds what an exec's output may hold."""

    def __init__(self, log_cap: int) -> None:
        self.log_cap = log_cap
        self.client: docker.DockerClient | None = None
        self.container: Any = None
        self.oom_before = 0

    def _service(self, cmd: list[str], what: str, user: str) -> None:
        """Start a harness helper and wait for its ``ready`` line."""
        api = self._api()
        ex = self._exec_create(cmd, user=user)
        stream = ExecStream(api, ex["Id"])
        seen = b""
        for chunk in stream.chunks():  # ends if the helper dies
            seen += chunk
            if b"ready" in seen:
                stream.drain()
                return
        stream.close()
        raise Fault(f"{what} did not start: {seen[-300:].decode(errors='replace')}")

    def _exec(
        self, cmd: list[str], user: str, workdir: str, env: Mapping[str, str], deadline: float
    ) -> Step:
        """Run one exec under the deadline and the log cap. On the deadline the whole
        container is killed; past the cap (or once the main process has exited and its
        children hold the output open) the Candidate's processes are killed."""
        api = self._api()
        self.oom_before = self._oom_kills()
        ex = self._exec_create(cmd, user=user, workdir=workdir, environment=dict(env))
        pump = Pump(ExecStream(api, ex["Id"]), self.log_cap)
        pump.start()
        exited_at: float | None = None
        while not pump.done.wait(0.25):
            now = time.monotonic()
            if now >= deadline:
                self._kill_container()
                pump.done.wait(5)
                return Step(None, pump.data())
            if pump.over_cap:
                self._reap(AGENT_UID)
                break
            if exited_at is None and not api.exec_inspect(ex["Id"])["Running"]:
                exited_at = now
            if exited_at is not None and now - exited_at > 2:  # children hold the output
                self._reap(AGENT_UID)
                break
        pump.done.wait(5)
        code = self._exit_code(ex["Id"])
        if code is None:
            raise Fault(f"exec {cmd[0]} still running after its processes were killed")
        self._check_alive()
        if pump.error is not None:
            raise Fault(f"reading the output of {cmd[0]} failed: {pump.error}")
        return Step(code, pump.data(), pump.over_cap)

    def _exec_create(self, cmd: list[str], **kw: Any) -> Any:
        """``exec_create``, waiting out a pause the engine reports late (``_late_pause``)."""
        return _late_pause(lambda: self._api().exec_create(self.container.id, cmd, **kw))

    def _pause(self) -> None:
        """``pause``, waiting out a late "paused" flag from the previous freeze."""
        _late_pause(self.container.pause)

    def _check_alive(self) -> None:
        """A step that ended because its container went away (the engine stopping, say)
        is the harness's failure, not the Candidate's."""
        self.container.reload()
        state = self.container.attrs["State"]
        if state.get("Status") != "running":
            why = f"status {state.get('Status')}, exit code {state.get('ExitCode')}"
            raise Fault(f"the attempt container stopped underneath the attempt ({why})")

    def _exit_code(self, exec_id: str, wait_s: float = ENGINE_SLACK_S) -> int | None:
        """The engine marks an exec finished shortly after its process ends (until then it
        answers ``Running: true`` and ``ExitCode: null``, even once the output has ended)."""
        deadline = time.monotonic() + wait_s
        while True:
            info = self._api().exec_inspect(exec_id) or {}
            if not info.get("Running", True):
                if info.get("ExitCode") is None:
                    raise Fault(f"the engine reported no exit code for exec {exec_id[:12]}")
                return int(info["ExitCode"])
            if time.monotonic() > deadline:
                return None
            time.sleep(0.1)

    def _reap(self, *uids: int) -> None:
        """Kill every process of ``uids``: freeze the container, SIGKILL them, thaw."""
        init = self.container.attrs["State"]["Pid"]
        for _ in range(3):
            if not any(engine.uid_pids(init, uid) for uid in uids):
                return
            self._pause()
            try:
                for uid in uids:
                    engine.kill_uid(init, uid)
            finally:
                self._unpause()
            if all(engine.wait_uid_gone(init, uid) for uid in uids):
                return
        raise Fault("could not stop the Candidate's processes")

    def _unpause(self, wait_s: float = ENGINE_SLACK_S) -> None:
        """The engine marks a container unpaused when containerd's event arrives, a moment
        after ``unpause`` returns; an exec before that is refused."""
        self.container.unpause()
        deadline = time.monotonic() + wait_s
        while True:
            self.container.reload()
            if not self.container.attrs["State"]["Paused"]:
                return
            if time.monotonic() > deadline:
                raise Fault("the attempt container stayed paused")
            time.sleep(0.02)

    def _kill_container(self) -> None:
        with contextlib.suppress(DockerException):
            self.container.kill()

    def remove(self) -> None:
        if self.container is not None:
            try:
                self.container.remove(force=True)
            except NotFound:
                pass
            except DockerException as err:
                raise Fault(f"could not remove container {self.container.short_id}: {err}") from err

    def _api(self) -> Any:
        assert self.client is not None
        return self.client.api

    def _oom_kills(self) -> int:
        try:
            return engine.oom_kills(self.container.attrs["State"]["Pid"])
        except (OSError, KeyError, ValueError):
            return 0


class Pump(threading.Thread):
    """Reads an exec's output until it ends, keeping at most ``cap`` bytes."""

    def __init__(self, stream: ExecStream, cap: int) -> None:
        super().__init__(name="recon-exec-log", daemon=True)
        self.stream = stream
        self.cap = cap
        self.buf = bytearray()
        self.over_cap = False
        self.error: StreamError | None = None
        self.done = threading.Event()

    def run(self) -> None:
        try:
            for chunk in self.stream.chunks():
                room = self.cap - len(self.buf)
                self.buf += chunk[:room]
                if len(chunk) > room:
                    self.over_cap = True  # keep draining (discarding) so the engine is not
                    # blocked on us while the harness stops the agent
        except StreamError as err:
            self.error = err
        except (DockerException, RequestException, OSError, ValueError):
            pass  # the container was killed or went away: the caller finds out which
        finally:
            self.stream.close()
            self.done.set()

    def data(self) -> bytes:
        data = bytes(self.buf)
        if self.over_cap:
            data += f"\n[recon] output cap of {self.cap} bytes reached; stopped\n".encode()
        return data


def _late_pause(call: Callable[[], T], wait_s: float = ENGINE_SLACK_S) -> T:
    """Run an engine call the engine may refuse because of a pause it reports late:
    containerd's "paused" event for a freeze can arrive after ``unpause`` has returned and
    mark the container paused again until its "resumed" event follows. A call in between is
    refused with 409 ("is paused", "is already paused"); it is retried for ``wait_s``.
    So is a freeze runc gave up on ("unable to freeze": on a busy host the cgroup did not
    reach frozen within its own retries; it thawed the container again, seen in CI)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return call()
        except APIError as err:
            unfrozen = "unable to freeze" in str(err)
            if not unfrozen and (err.status_code != 409 or "paused" not in str(err)):
                raise
            if time.monotonic() > deadline:
                why = "could not be frozen" if unfrozen else "stayed paused"
                raise Fault(f"the attempt container {why}") from err
            time.sleep(0.2 if unfrozen else 0.05)
