"""The native backend: runs an attempt on the host, for development only.

Its attempts are non-formal. It bounds wall time (process group killed), address space and
file size with rlimits, and caps the logs it keeps; it is not a security boundary.
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from recon.errors import ReconError
from recon.model import Contract, Entry, Outcome, Trace
from recon.sandbox.attempt import AttemptRun, harness_bug, parse_trace
from recon.sandbox.entry_files import copy_agent_files


@dataclass
class _Proc:
    code: int | None  # None: killed at the time limit
    log: bytes


def run_native(
    workspace: Path, entry: Entry, entries_dir: Path, contract: Contract, time_limit_s: int
) -> AttemptRun:
    """Run the entry's agent in ``workspace``, then the contract's build step. The agent's
    ``{entry_dir}`` is a read-only copy of its entry's declared files (never ``entries/``)."""
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="recon-entry-") as tmp:
            files = entry.agent.files
            entry_dir = copy_agent_files(entries_dir, entry.id, files, Path(tmp) / "entry")
            return _run_attempt(workspace, entry, entry_dir, contract, time_limit_s)
    except (OSError, ReconError) as err:
        return _done("harness_failure", f"harness: {err}", None, started, b"", None)
    except Exception as err:  # every exception becomes an attempt with a reason
        return _done("harness_failure", harness_bug(err), None, started, b"", None)


def _run_attempt(
    workspace: Path, entry: Entry, entry_dir: Path, contract: Contract, time_limit_s: int
) -> AttemptRun:
    started = time.monotonic()
    limit = min(time_limit_s, entry.budget.wall_s)
    values = {
        "workspace": str(workspace),
        "brief": str(workspace / "brief.md"),
        "evidence": str(workspace / "evidence"),
        "entry_dir": str(entry_dir),
        "python": sys.executable,
    }
    command = [part.format(**values) for part in entry.agent.command]
    env, secrets = _environment(entry, workspace)
    cap = entry.budget.output_mb * 1024 * 1024
    try:
        agent = _run(command, workspace, env, limit, entry, cap)
    except OSError as err:
        return _done(
            "harness_failure", f"could not start the agent: {err}", None, started, b"", None
        )
    logs = b"== agent ==\n" + _scrub(agent.log, secrets)
    trace = parse_trace(agent.log)
    if agent.code is None:
        return _done(
            "timeout",
            f"agent exceeded the time limit of {limit}s",
            None,
            started,
            logs,
            None,
            trace,
        )
    if agent.code != 0:
        reason = f"agent exited with status {agent.code} before submitting"
        return _done("missing", reason, agent.code, started, logs, None, trace)
    if contract.build.command:
        remaining = max(1, int(limit - (time.monotonic() - started)))
        build = _run(contract.build.command, workspace, env, remaining, entry, cap)
        logs += b"\n== build ==\n" + _scrub(build.log, secrets)
        if build.code != 0:
            why = "timed out" if build.code is None else f"exited with status {build.code}"
            return _done("ungradeable", f"build step {why}", build.code, started, logs, None, trace)
    output = workspace / contract.build.output
    if not output.is_dir() or not any(output.iterdir()):
        reason = f"the build left no output in {contract.build.output}/"
        return _done("ungradeable", reason, 0, started, logs, None, trace)
    return _done("valid", "submitted a build", 0, started, logs, output, trace)


def _done(
    outcome: Outcome,
    reason: str,
    code: int | None,
    started: float,
    logs: bytes,
    output: Path | None,
    trace: Trace | None = None,
) -> AttemptRun:
    took = round(time.monotonic() - started, 3)
    return AttemptRun(outcome, reason, code, took, logs, output, trace or Trace())


def _environment(entry: Entry, workspace: Path) -> tuple[dict[str, str], list[str]]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workspace),
        "LANG": "C.UTF-8",
        "TZ": "UTC",
    }
    secrets = []
    for name in entry.agent.env:
        if name in os.environ:
            env[name] = os.environ[name]
            secrets.append(os.environ[name])
    return env, secrets


def _run(
    command: list[str], cwd: Path, env: dict[str, str], limit: int, entry: Entry, cap: int
) -> _Proc:
    memory = entry.budget.memory_mb * 1024 * 1024
    disk = entry.budget.disk_mb * 1024 * 1024

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_FSIZE, (disk, disk))

    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=limits,
        )
        try:
            code: int | None = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
        log.seek(0)
        data = log.read(cap + 1)
    if len(data) > cap:
        data = data[:cap] + f"\n[recon] log truncated at {cap} bytes\n".encode()
    return _Proc(code, data)


def _scrub(log: bytes, secrets: list[str]) -> bytes:
    for value in secrets:
        if len(value) >= 4:
            log = log.replace(value.encode(), b"***")
    return log
