"""One step of a native attempt (the agent, or the build step) as a host process.

The command runs under ``reaper.py`` in a session of its own, with address-space and
file-size rlimits, its output to a temporary file read back up to a cap. On every way out
(it ends, the time limit passes, the harness itself is interrupted) the reaper is stopped
with SIGTERM and kills and reaps every process the step started, including ones that left
its session; if the reaper does not end within ``STOP_GRACE_S`` its process group is
killed. No process of the step outlives ``run_step``.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REAPER = Path(__file__).with_name("reaper.py")
STOP_GRACE_S = 30.0


@dataclass(frozen=True)
class Limits:
    memory: int  # bytes of address space
    disk: int  # bytes per file written
    log: int  # bytes of output kept


@dataclass
class Step:
    code: int | None  # None: stopped at the time limit; negative: killed by that signal
    log: bytes
    not_started: str = ""  # why the command could not start (then ``code`` is 127)


def run_step(
    command: list[str], cwd: Path, env: dict[str, str], limit_s: float, limits: Limits
) -> Step:
    """Run ``command`` for at most ``limit_s`` seconds; nothing it started survives."""

    def apply_limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory, limits.memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.disk, limits.disk))

    report, report_w = os.pipe()
    try:
        with tempfile.TemporaryFile() as log:
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-I", str(REAPER), str(report_w), *command],
                    cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, start_new_session=True,
                    preexec_fn=apply_limits, pass_fds=(report_w,),
                )  # fmt: skip
            finally:
                os.close(report_w)
            try:
                code: int | None = proc.wait(timeout=limit_s)
            except subprocess.TimeoutExpired:
                code = None
            finally:
                stop(proc)
            not_started = _read(report)
            log.seek(0)
            data = log.read(limits.log + 1)
    finally:
        os.close(report)
    if len(data) > limits.log:
        data = data[: limits.log] + f"\n[recon] log truncated at {limits.log} bytes\n".encode()
    return Step(code, data, not_started)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End the reaper (which kills and reaps the step's processes) and reap it."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            proc.wait(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # anything of its group the reaper missed


def _read(fd: int) -> str:
    chunks = []
    while chunk := os.read(fd, 4096):
        chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")
