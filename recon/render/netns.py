"""The render boundary's network: chromium runs in an empty network namespace.

Request interception (:mod:`recon.render.serve`) answers every request chromium routes
through the DevTools protocol, but several page APIs open sockets below that layer:
WebRTC's STUN (UDP) and TURN (TCP), WebTransport, DNS prefetch, preconnect, and the
speculative connection chromium makes before a navigation is routed. So chromium is
started by ``unshare --net``: a new network namespace with no interface but a loopback
that is down. Every socket of every chromium process then fails at ``connect`` or
``sendto`` (``ENETUNREACH``), whatever the API, and nothing reaches the host or beyond.
Playwright drives chromium over a pipe (file descriptors 3 and 4, which ``unshare``
hands on with ``exec``), so it needs no network either.

``unshare --net`` needs ``CAP_SYS_ADMIN`` (root); without it,
``unshare --user --map-root-user --net`` makes an unprivileged user namespace first.
When neither is permitted, rendering stops with a :class:`HarnessError` naming the fix:
it never falls back to an open network.

The launcher also bounds memory and names the process. Every chromium process (browser,
renderers, utilities) inherits ``RLIMIT_DATA`` of :data:`DATA_LIMIT_BYTES` (``ulimit -d``):
since Linux 4.7 it counts private writable mappings, so a page's 4 GB ``ArrayBuffer`` is
refused (``RangeError``) and a heap that keeps growing crashes its renderer, while V8's
large ``PROT_NONE`` address-space reservations are not counted. ``RLIMIT_AS`` counts those
too, and Debian's chromium does not start under any ``RLIMIT_AS`` that would bound a page.
``sh`` execs ``unshare``, which execs chromium (no ``--fork``), so the pid the launcher
writes to :data:`PID_FILE` is the browser's own: :mod:`recon.render.pool` kills it when a
browser hangs or a page runs past its budget.
"""

from __future__ import annotations

import functools
import shlex
import shutil
import subprocess
from pathlib import Path

from recon.errors import HarnessError

# Tried in order: the first that this machine permits is used.
MODES = (("--net",), ("--user", "--map-root-user", "--net"))
FIX = (
    "chromium must run in an empty network namespace and this machine permits none. "
    "Fix: run the harness as root, or allow unprivileged user namespaces "
    "(`sysctl -w kernel.unprivileged_userns_clone=1` and a non-zero "
    "`user.max_user_namespaces`; in a container, a seccomp/AppArmor profile that allows "
    "`unshare`)"
)
DATA_LIMIT_BYTES = 2 * 1024**3
"""RLIMIT_DATA of every chromium process: an honest page needs far less."""
PID_FILE = "chromium.pid"


def unshare_prefix() -> tuple[str, ...]:
    """The command prefix that runs a program in a new, empty network namespace."""
    unshare = shutil.which("unshare")
    if unshare is None:
        raise HarnessError(
            "`unshare` not found on PATH: chromium must run in an empty network namespace; "
            "install util-linux (`apt-get install util-linux`)"
        )
    return _probe(unshare)


@functools.lru_cache(maxsize=4)
def _probe(unshare: str) -> tuple[str, ...]:
    """Try each mode, once per process and ``unshare`` executable."""
    tried = []
    for mode in MODES:
        command = [unshare, *mode, "--", "true"]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            tried.append(f"`{shlex.join(command)}`: {exc}")
            continue
        if proc.returncode == 0:
            return (unshare, *mode, "--")
        tried.append(f"`{shlex.join(command)}`: {proc.stderr.strip() or proc.returncode}")
    raise HarnessError(f"{FIX}; tried {'; '.join(tried)}")


def write_launcher(folder: Path, chromium: str) -> Path:
    """An executable in ``folder`` that runs ``chromium`` with its arguments in a new,
    empty network namespace, under :data:`DATA_LIMIT_BYTES`, writing its pid to
    ``folder/PID_FILE`` (playwright launches it in chromium's place)."""
    launcher = folder / "chromium-netns"
    command = shlex.join([*unshare_prefix(), chromium])
    pid_file = shlex.quote(str(folder / PID_FILE))
    launcher.write_text(
        "#!/bin/sh\n"
        f"ulimit -d {DATA_LIMIT_BYTES // 1024} || exit 125\n"
        f"echo $$ > {pid_file}\n"
        f'exec {command} "$@"\n'
    )
    launcher.chmod(0o700)
    return launcher


def launched_pid(folder: Path) -> int:
    """The pid of the chromium the launcher in ``folder`` started."""
    try:
        return int((folder / PID_FILE).read_text())
    except (OSError, ValueError) as exc:
        raise HarnessError(f"{folder / PID_FILE}: the chromium launcher left no pid") from exc
