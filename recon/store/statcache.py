"""A stat cache so unchanged files are never rehashed.

Keyed by path and checked against (dev, inode, size, mtime_ns, ctime_ns). A file whose
mtime or ctime lies within ``RACY_NS`` of the moment it was hashed is *racy*: it could be
rewritten within the same timestamp tick without any stat field changing, so its entry
is kept but never trusted; the next lookup rehashes it (git's "racily clean" rule).
"""

from __future__ import annotations

import atexit
import os
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from recon.store.disk import DiskFull, space_for
from recon.store.objects import hash_file

RACY_NS = 1_000_000_000  # wider than any filesystem timestamp tick we run on

_Key = tuple[int, int, int, int, int]


def stat_key(st: os.stat_result) -> _Key:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class StatCache:
    """Path -> (stat key, blake3 digest), persisted in SQLite under the store."""

    def __init__(self, db_path: Path | None) -> None:
        self.db_path = db_path
        self.hashed = 0  # files actually read and hashed by this instance
        self._rows: dict[str, tuple[_Key, str, bool]] | None = None
        self._dirty: dict[str, tuple[_Key, str, bool]] = {}
        self._names: dict[str, str] = {}  # path as given -> absolute (abspath costs a getcwd)
        if db_path is not None:
            atexit.register(self.flush)

    def digest(self, path: str | Path, st: os.stat_result | None = None) -> str:
        """The blake3 digest of ``path``, from cache when its stat is unchanged."""
        return self.entry(path, st)[1]

    def entry(self, path: str | Path, st: os.stat_result | None = None) -> tuple[_Key, str, bool]:
        """``(stat key, digest, racy)`` of ``path``: a racy entry must not be trusted later."""
        name = self._absolute(path)
        if st is None:
            st = os.stat(name)
        key = stat_key(st)
        rows = self._load()
        row = rows.get(name)
        if row is not None and row[0] == key and not row[2]:
            return row
        started = time.time_ns()
        digest = hash_file(name)
        self.hashed += 1
        racy = started - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS
        entry = rows[name] = self._dirty[name] = (key, digest, racy)
        if len(self._dirty) >= 2000:
            self.flush()
        return entry

    def _absolute(self, path: str | Path) -> str:
        """``os.path.abspath``, memoised: a relative path resolves against the working
        folder of its first lookup (doit changes folder once, before any check)."""
        given = os.fspath(path)
        name = self._names.get(given)
        if name is None:
            name = self._names[given] = os.path.abspath(given)
        return name

    def _load(self) -> dict[str, tuple[_Key, str, bool]]:
        if self._rows is None:
            self._rows = {}
            if self.db_path is not None and self.db_path.exists():
                try:
                    self._rows = self._read()
                except sqlite3.DatabaseError as err:
                    self._discard(err)
        return self._rows

    def _read(self) -> dict[str, tuple[_Key, str, bool]]:
        found: dict[str, tuple[_Key, str, bool]] = {}
        db = self._connect()
        try:
            query = "select path, dev, ino, size, mtime, ctime, digest, racy from stat"
            for row in db.execute(query):
                key = (row[1], row[2], row[3], row[4], row[5])
                found[str(row[0])] = (key, str(row[6]), bool(row[7]))
        finally:
            db.close()
        return found

    def _discard(self, err: Exception) -> None:
        """A database that does not read (truncated, garbage, another table): a cache, so
        it is removed and rebuilt; every file is hashed again, never trusted."""
        assert self.db_path is not None
        for suffix in ("", "-wal", "-shm"):
            self.db_path.with_name(self.db_path.name + suffix).unlink(missing_ok=True)
        sys.stderr.write(
            f"[recon] stat cache {self.db_path} unreadable ({err}); removed, files are "
            "hashed again\n"
        )

    def flush(self) -> None:
        """Persist the new entries. On a full disk they are dropped with one line said: the
        cache only saves rehashing, so losing entries costs work, never skips it."""
        if not self._dirty or self.db_path is None:
            return
        rows = [(p, *k, d, int(r)) for p, (k, d, r) in self._dirty.items()]
        try:
            with space_for(self.db_path):
                self._write(rows)
        except DiskFull as err:
            sys.stderr.write(f"[recon] stat cache not saved ({err}); files are hashed again\n")
        except sqlite3.DatabaseError as err:
            self._discard(err)
        self._dirty.clear()

    def _write(self, rows: Sequence[tuple[object, ...]]) -> None:
        db = self._connect()
        try:
            with db:
                db.executemany("INSERT OR REPLACE INTO stat VALUES (?,?,?,?,?,?,?,?)", rows)
        finally:
            db.close()

    def _connect(self) -> sqlite3.Connection:
        assert self.db_path is not None
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.db_path, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(
            "CREATE TABLE IF NOT EXISTS stat (path TEXT PRIMARY KEY, dev INT, ino INT, size INT,"
            " mtime INT, ctime INT, digest TEXT, racy INT)"
        )
        return db
