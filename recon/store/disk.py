"""A full disk under the store, reported as one error naming the disk and the fix.

Every write of the store (objects, action records, pointers, state files) goes through
:func:`space_for`, which turns the kernel's ``ENOSPC`` / ``EDQUOT`` (and SQLite's "database
or disk is full") into :class:`DiskFull`. Writes are atomic (a temp file, then a rename),
so a write that runs out of space leaves nothing half-written behind: only its temp file,
which is removed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from recon.errors import StoreError

FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


class DiskFull(StoreError):
    """No space (or quota) left on the disk a write needed."""

    def __init__(self, path: Path | str) -> None:
        disk = mount_of(Path(path))
        super().__init__(
            f"no space left on the disk holding {path} (mounted at {disk}, "
            f"{_free(disk)} bytes free); free space there, then run `recon store verify` "
            "and build again"
        )
        self.path = str(path)
        self.disk = str(disk)


def is_full(err: BaseException) -> bool:
    """Whether ``err`` says the disk (or the quota) is full."""
    if isinstance(err, OSError):
        return err.errno in FULL
    return isinstance(err, sqlite3.OperationalError) and "disk is full" in str(err)


@contextlib.contextmanager
def space_for(path: Path | str) -> Iterator[None]:
    """Raise :class:`DiskFull` (naming ``path``) for a write inside that runs out of space."""
    try:
        yield
    except (OSError, sqlite3.OperationalError) as err:
        if is_full(err):
            raise DiskFull(path) from None
        raise


def mount_of(path: Path) -> Path:
    """The mount point of the filesystem holding ``path`` (or its nearest existing parent)."""
    found = Path(os.path.abspath(path))
    while not found.exists() and found != found.parent:
        found = found.parent
    while not os.path.ismount(found) and found != found.parent:
        found = found.parent
    return found


def _free(disk: Path) -> int:
    try:
        st = os.statvfs(disk)
    except OSError:
        return -1
    return st.f_bavail * st.f_frsize
