"""Builds and ``recon store gc`` in one store: ``store/state/gc.lock``.

A build writes objects before the pointer that makes them live, so a collection that
ran in between would remove them. Every build holds a shared lock on ``gc.lock`` for as
long as it runs (any number of builds at once); ``gc`` takes it exclusively, so it waits
for the running builds to end, and a build that starts meanwhile waits for the gc. The
locks are ``flock`` locks: the kernel drops them when the process ends, killed or not,
so a crashed build never leaves the store locked.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from recon.errors import StoreError
from recon.store.disk import space_for
from recon.store.layout import StoreLayout


class StoreGuard:
    """The lock on ``<store>/state/gc.lock``, held shared (builds) or exclusive (gc)."""

    def __init__(self, store_root: Path) -> None:
        self.path = StoreLayout(Path(store_root)).gc_lock
        self._fd: int | None = None

    def _open(self) -> int:
        if self._fd is None:
            try:
                with space_for(self.path):
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                    self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            except OSError as err:
                raise StoreError(
                    f"{self.path}: cannot be opened ({err.strerror}); builds and gc lock the "
                    "store there: make the store writable, or point RECON_STORE at one"
                ) from None
        return self._fd

    def share(self, waiting: Callable[[], object] = lambda: None) -> None:
        """Hold the lock shared until :meth:`release` or the process ends (a build)."""
        self._take(fcntl.LOCK_SH, waiting)

    @contextlib.contextmanager
    def exclusive(self, waiting: Callable[[], object] = lambda: None) -> Iterator[None]:
        """Hold the lock alone inside the block (a gc); ``waiting`` is called once if a
        build holds it, before waiting for it."""
        self._take(fcntl.LOCK_EX, waiting)
        try:
            yield
        finally:
            self.release()

    def _take(self, how: int, waiting: Callable[[], object]) -> None:
        fd = self._open()
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
        except BlockingIOError:
            waiting()
            fcntl.flock(fd, how)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the lock
            self._fd = None
