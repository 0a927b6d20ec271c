"""Atomic writes: temp file in the same folder, fsync, then rename (or hard link)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def _temp_copy(path: Path, data: bytes, mode: int) -> Iterator[str]:
    """A fsynced temp file beside ``path`` holding ``data``; removed on exit if still there."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix="~")
    try:
        with os.fdopen(fd, "wb") as handle:
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
