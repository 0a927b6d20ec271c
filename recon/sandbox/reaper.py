"""Runs one native step's command so that nothing it starts outlives it (standard library).

``python -I reaper.py REPORT_FD COMMAND...``: this process makes itself a *child
subreaper* (``PR_SET_CHILD_SUBREAPER``), so every process the command leaves behind, even
one that started its own session (``setsid``) or double-forked, is re-parented to it rather
than to the host's init (which, in a container or a micro-VM, may never reap). When the
command ends, or SIGTERM arrives (the harness's time limit), it freezes (SIGSTOP) every
descendant until the set stops growing, kills them all (SIGKILL) and reaps every one,
zombies included. Then it exits as the command did: the same status, or the same signal.

A command that cannot start is reported on ``REPORT_FD`` (a pipe the harness reads), so
that the harness tells "could not start" from an exit status of the command's own.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
KILL_ROUNDS = 50
REAP_WAIT_S = 10.0


class _Stop(Exception):
    """SIGTERM from the harness: stop the command now."""


def _on_term(signum: int, frame: object) -> None:
    raise _Stop


def main(argv: list[str]) -> int:
    report, command = int(argv[0]), argv[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        os.write(report, f"prctl(PR_SET_CHILD_SUBREAPER): errno {ctypes.get_errno()}".encode())
        return 126
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # the harness died: clean up
    signal.signal(signal.SIGTERM, _on_term)
    status: int | None = None
    try:
        child = subprocess.Popen(command)  # the entry's own command
        os.close(report)
        status = _wait_for(child.pid)
        child.returncode = 0  # reaped here; keeps Popen from warning
    except _Stop:
        pass
    except OSError as err:
        os.write(report, str(err).encode())
        status = 127 << 8
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _kill_descendants()
    return _exit_as(status)


def _wait_for(pid: int) -> int:
    """Reap children (orphans re-parented here among them) until ``pid`` ends."""
    while True:
        done, status = os.waitpid(-1, 0)
        if done == pid:
            return status


def _kill_descendants() -> None:
    """Freeze every descendant until no new one appears, kill them all, reap them all."""
    me = os.getpid()
    for _ in range(KILL_ROUNDS):
        found = _descendants(me)
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        if _descendants(me) - found:
            continue  # something forked before it was frozen: freeze that too
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _reap_all()
    _reap_all(wait_s=REAP_WAIT_S)


def _reap_all(wait_s: float = 0.0) -> None:
    """Reap every child that has ended; with ``wait_s``, wait that long for the rest."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # no children left
        if pid == 0:
            if time.monotonic() >= deadline:
                return
            time.sleep(0.01)


def _descendants(root: int) -> set[int]:
    """Every process below ``root`` (from each process's parent in ``/proc``)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    found: set[int] = set()
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            if pid not in found:
                found.add(pid)
                todo.append(pid)
    return found


def _exit_as(status: int | None) -> int:
    if status is None:
        return 128 + signal.SIGTERM
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)  # die of the same signal, as the command did
        return 128 + sig
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
