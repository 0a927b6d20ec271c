"""The native backend: runs an attempt on the host, for development only.

Its attempts are non-formal. It bounds wall time, address space and file size, and caps the
logs it keeps; each step runs under a subreaper, so no process of the attempt outlives it
(``native_step.py``). It is not a security boundary. Its build output is taken in by the
docker backend's rule (``outputs.py``: archived without following a link, then unpacked
into ``out``, links inside it copied, anything odd refused as ``ungradeable``).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from recon.errors import ReconError
from recon.model import Budget, Contract, Entry, Outcome, Trace
from recon.sandbox.attempt import AttemptRun, harness_bug, parse_trace
from recon.sandbox.entry_files import copy_agent_files
from recon.sandbox.native_step import Limits, run_step
from recon.sandbox.outputs import OutputCaps, OutputRefused, output_folder, take_folder

MB = 1024 * 1024


def run_native(
    workspace: Path,
    entry: Entry,
    entries_dir: Path,
    contract: Contract,
    time_limit_s: int,
    *,
    out: Path,
) -> AttemptRun:
    """Run the entry's agent in ``workspace``, then the contract's build step; take the
    build output into ``out`` (which must not exist yet). The agent's ``{entry_dir}`` is a
    read-only copy of its entry's declared files (never ``entries/``)."""
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="recon-entry-") as tmp:
            files = entry.agent.files
            entry_dir = copy_agent_files(entries_dir, entry.id, files, Path(tmp) / "entry")
            return _run_attempt(workspace, entry, entry_dir, contract, time_limit_s, out)
    except (OSError, ReconError) as err:
        return _done("harness_failure", f"harness: {err}", None, started, b"", None)
    except Exception as err:  # every exception becomes an attempt with a reason
        return _done("harness_failure", harness_bug(err), None, started, b"", None)


def _run_attempt(
    workspace: Path,
    entry: Entry,
    entry_dir: Path,
    contract: Contract,
    time_limit_s: int,
    out: Path,
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
    b = entry.budget
    limits = Limits(b.memory_mb * MB, b.disk_mb * MB, b.output_mb * MB)
    agent = run_step(command, workspace, env, limit, limits)
    if agent.not_started:
        why = f"could not start the agent: {agent.not_started}"
        return _done("harness_failure", why, None, started, b"", None)
    logs = b"== agent ==\n" + _scrub(agent.log, secrets)
    trace = parse_trace(agent.log)
    if agent.code is None:
        why = f"agent exceeded the time limit of {limit}s"
        return _done("timeout", why, None, started, logs, None, trace)
    if agent.code != 0:
        reason = f"agent exited with status {agent.code} before submitting"
        return _done("missing", reason, agent.code, started, logs, None, trace)
    if contract.build.command:
        remaining = max(1.0, limit - (time.monotonic() - started))
        build = run_step(contract.build.command, workspace, env, remaining, limits)
        logs += b"\n== build ==\n" + _scrub(build.log, secrets)
        if build.code != 0:
            why = "timed out" if build.code is None else f"exited with status {build.code}"
            if build.not_started:
                why = f"could not start: {build.not_started}"
            return _done("ungradeable", f"build step {why}", build.code, started, logs, None, trace)
    outcome, reason, refusals = _take(workspace, contract.build.output, out, b)
    output = out if outcome == "valid" else None
    return _done(outcome, reason, 0, started, logs, output, trace, refusals)


def _take(
    workspace: Path, output: str, out: Path, budget: Budget
) -> tuple[Outcome, str, list[str]]:
    """The build output taken into ``out`` by the rule of ``outputs.py``: ``valid``, or
    ``ungradeable`` with the reason and the refusals."""
    caps = OutputCaps.of(budget, budget.disk_mb * MB)
    try:
        folder = output_folder(workspace, output)
        files = 0 if folder is None else take_folder(folder, output, out, caps)
    except OutputRefused as refused:
        return "ungradeable", refused.reason, refused.refusals
    if files == 0:
        return "ungradeable", f"the build left no output in {output}/", []
    return "valid", "submitted a build", []


def _done(
    outcome: Outcome,
    reason: str,
    code: int | None,
    started: float,
    logs: bytes,
    output: Path | None,
    trace: Trace | None = None,
    refusals: list[str] | None = None,
) -> AttemptRun:
    took = round(time.monotonic() - started, 3)
    return AttemptRun(outcome, reason, code, took, logs, output, trace or Trace(), refusals or [])


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


def _scrub(log: bytes, secrets: list[str]) -> bytes:
    for value in secrets:
        if len(value) >= 4:
            log = log.replace(value.encode(), b"***")
    return log
