"""Atomic writes: temp file in the same folder, fsync, then rename (or hard link)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from recon.store.disk import space_for


@contextlib.contextmanager
def _temp_copy(path: Path, data: bytes, mode: int) -> Iterator[str]:
    """A fsynced temp file beside ``path`` holding ``data``; removed on exit if still there."""
    with space_for(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix="~")
    try:
        with space_for(path), os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        yield tmp
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def write_atomic(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` so readers see either the old file or the new one."""
    with _temp_copy(path, data, mode) as tmp:
        os.replace(tmp, path)
    _fsync_dir(path.parent)


def write_once(path: Path, data: bytes, *, mode: int = 0o444) -> bool:
    """Create ``path`` atomically unless it exists; False (first writer kept) if it does.

    The temp file is hard-linked into place, which fails if another writer got there
    first, so two processes racing on the same path can never overwrite each other.
    """
    with _temp_copy(path, data, mode) as tmp:
        try:
            os.link(tmp, path)
        except FileExistsError:
            return False
    _fsync_dir(path.parent)
    return True


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_RENAME_EXCHANGE = 2  # linux/fs.h


def replace_dir(staging: Path, dest: Path) -> None:
    """Put the folder ``staging`` at ``dest`` in one step; the old ``dest`` is removed after.

    Where the kernel offers ``renameat2(RENAME_EXCHANGE)`` the two folders swap
    atomically, so a reader sees the old folder or the new one, never neither. Elsewhere
    the old folder is renamed aside first (a moment without ``dest``, never a half one).
    """
    staging, dest = Path(staging), Path(dest)
    if not dest.exists():
        os.rename(staging, dest)
        _fsync_dir(dest.parent)
        return
    if not _exchange(staging, dest):
        aside = dest.with_name(f".{dest.name}.old-{os.getpid()}")
        os.rename(dest, aside)
        os.rename(staging, dest)
        staging = aside
    _fsync_dir(dest.parent)
    shutil.rmtree(staging)


def _exchange(a: Path, b: Path) -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd = -100
    done = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(done == 0)
