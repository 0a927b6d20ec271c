"""The stat cache: unchanged files are not rehashed; racily clean files always are.

Timestamps are simulated with hand-built ``os.stat_result`` values (and, where the
passage of time matters, a fake clock) so nothing here sleeps or depends on the
filesystem's timestamp granularity.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from types import SimpleNamespace

import blake3
import pytest

from recon.store import statcache as statcache_module
from recon.store.statcache import RACY_NS, StatCache

HOUR_NS = 3600 * 10**9


def b3(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()


def fake_stat(real: os.stat_result, *, mtime_ns: int, ctime_ns: int) -> os.stat_result:
    """``real`` with the given mtime/ctime (both the float and the _ns fields)."""
    fields = list(real[:10])
    fields[8] = mtime_ns / 1e9  # st_mtime (float)
    fields[9] = ctime_ns / 1e9  # st_ctime (float)
    fake = os.stat_result(
        fields,
        {
            "st_atime_ns": real.st_atime_ns,
            "st_mtime_ns": mtime_ns,
            "st_ctime_ns": ctime_ns,
        },
    )
    assert (fake.st_mtime_ns, fake.st_ctime_ns) == (mtime_ns, ctime_ns)
    assert (fake.st_dev, fake.st_ino, fake.st_size) == (real.st_dev, real.st_ino, real.st_size)
    return fake


def old_stat(path: Path, *, age_ns: int = 24 * HOUR_NS) -> os.stat_result:
    """The stat of ``path`` as if it had been written (mtime and ctime) ``age_ns`` ago."""
    when = time.time_ns() - age_ns
    os.utime(path, ns=(when, when))
    return fake_stat(os.stat(path), mtime_ns=when, ctime_ns=when)


class Clock:
    """A settable stand-in for the ``time`` module inside statcache."""

    def __init__(self) -> None:
        self.now = time.time_ns()

    def time_ns(self) -> int:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(statcache_module, "time", SimpleNamespace(time_ns=fake.time_ns))
    return fake


def test_digest_is_the_blake3_of_the_content(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"content")
    cache = StatCache(None)
    assert cache.digest(path) == b3(b"content")
    assert cache.hashed == 1


def test_unchanged_old_file_is_not_rehashed_across_instances(tmp_path: Path) -> None:
    db = tmp_path / "state" / "stat.sqlite"
    path = tmp_path / "f.txt"
    path.write_bytes(b"stable")
    st = old_stat(path)

    first = StatCache(db)
    assert first.digest(path, st) == b3(b"stable")
    assert first.digest(path, st) == b3(b"stable")
    assert first.hashed == 1
    first.flush()

    second = StatCache(db)
    assert second.digest(path, st) == b3(b"stable")
    assert second.hashed == 0


def test_without_flush_nothing_is_persisted(tmp_path: Path) -> None:
    db = tmp_path / "stat.sqlite"
    path = tmp_path / "f.txt"
    path.write_bytes(b"x")
    st = old_stat(path)
    StatCache(db).digest(path, st)
    second = StatCache(db)
    second.digest(path, st)
    assert second.hashed == 1


def test_old_file_is_trusted_from_cache_even_if_its_bytes_changed_behind_its_back(
    tmp_path: Path,
) -> None:
    """Proof that an old, unchanged stat is answered from the cache without reading the file."""
    path = tmp_path / "f.txt"
    path.write_bytes(b"AAAA")
    st = old_stat(path)
    cache = StatCache(None)
    assert cache.digest(path, st) == b3(b"AAAA")
    path.write_bytes(b"BBBB")  # same size; we present the same (old) stat again
    assert cache.digest(path, st) == b3(b"AAAA")
    assert cache.hashed == 1


def test_content_change_is_detected(tmp_path: Path) -> None:
    db = tmp_path / "stat.sqlite"
    path = tmp_path / "f.txt"
    path.write_bytes(b"version one")
    first = StatCache(db)
    assert first.digest(path, old_stat(path, age_ns=2 * HOUR_NS)) == b3(b"version one")
    first.flush()

    path.write_bytes(b"version two, longer")
    st = old_stat(path, age_ns=HOUR_NS)  # later mtime, new size
    second = StatCache(db)
    assert second.digest(path, st) == b3(b"version two, longer")
    assert second.hashed == 1


def test_same_size_rewrite_with_new_mtime_is_detected(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"AAAA")
    cache = StatCache(None)
    assert cache.digest(path, old_stat(path, age_ns=2 * HOUR_NS)) == b3(b"AAAA")
    path.write_bytes(b"BBBB")
    assert cache.digest(path, old_stat(path, age_ns=HOUR_NS)) == b3(b"BBBB")
    assert cache.hashed == 2


def test_rewrite_within_the_same_timestamp_tick_is_detected(tmp_path: Path) -> None:
    """Two contents, one identical stat (mtime = now): the racy rule forces a rehash."""
    path = tmp_path / "f.txt"
    path.write_bytes(b"AAAA")
    now = time.time_ns()
    st = fake_stat(os.stat(path), mtime_ns=now, ctime_ns=now)
    cache = StatCache(None)
    assert cache.digest(path, st) == b3(b"AAAA")

    path.write_bytes(b"BBBB")  # same size, and the stat we present is byte-for-byte the same
    assert cache.digest(path, st) == b3(b"BBBB")
    assert cache.hashed == 2


def test_racy_entry_stays_untrusted_across_instances(tmp_path: Path) -> None:
    db = tmp_path / "stat.sqlite"
    path = tmp_path / "f.txt"
    path.write_bytes(b"AAAA")
    now = time.time_ns()
    st = fake_stat(os.stat(path), mtime_ns=now, ctime_ns=now)
    first = StatCache(db)
    first.digest(path, st)
    first.flush()

    path.write_bytes(b"BBBB")
    second = StatCache(db)
    assert second.digest(path, st) == b3(b"BBBB")
    assert second.hashed == 1


def test_recent_ctime_alone_makes_an_entry_racy(tmp_path: Path) -> None:
    """An old mtime does not hide a fresh ctime (utime can move mtime, never ctime)."""
    path = tmp_path / "f.txt"
    path.write_bytes(b"AAAA")
    real = os.stat(path)
    st = fake_stat(real, mtime_ns=time.time_ns() - HOUR_NS, ctime_ns=time.time_ns())
    cache = StatCache(None)
    assert cache.digest(path, st) == b3(b"AAAA")
    path.write_bytes(b"BBBB")
    assert cache.digest(path, st) == b3(b"BBBB")


def test_touch_without_content_change_is_hashed_once_then_trusted(tmp_path: Path) -> None:
    db = tmp_path / "stat.sqlite"
    path = tmp_path / "f.txt"
    path.write_bytes(b"same bytes")
    first = StatCache(db)
    first.digest(path, old_stat(path, age_ns=3 * HOUR_NS))
    first.flush()

    touched = old_stat(path, age_ns=HOUR_NS)  # new mtime/ctime, older than RACY_NS by now
    second = StatCache(db)
    assert second.digest(path, touched) == b3(b"same bytes")
    assert second.hashed == 1
    for _ in range(3):
        assert second.digest(path, touched) == b3(b"same bytes")
    assert second.hashed == 1


def test_fresh_touch_is_rehashed_until_it_is_older_than_racy_ns(
    tmp_path: Path, clock: Clock
) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"same bytes")
    touched_at = clock.now
    st = fake_stat(os.stat(path), mtime_ns=touched_at, ctime_ns=touched_at)
    cache = StatCache(None)

    cache.digest(path, st)
    assert cache.hashed == 1
    clock.now = touched_at + RACY_NS // 2  # still inside the window: not trusted
    cache.digest(path, st)
    assert cache.hashed == 2

    clock.now = touched_at + RACY_NS + 1  # past the window: hashed once more ...
    assert cache.digest(path, st) == b3(b"same bytes")
    assert cache.hashed == 3
    for _ in range(3):  # ... and from then on trusted
        clock.now += HOUR_NS
        assert cache.digest(path, st) == b3(b"same bytes")
    assert cache.hashed == 3


def test_entries_are_per_path(tmp_path: Path) -> None:
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_bytes(b"a")
    b.write_bytes(b"b")
    cache = StatCache(None)
    assert cache.digest(a, old_stat(a)) == b3(b"a")
    assert cache.digest(b, old_stat(b)) == b3(b"b")
    assert cache.hashed == 2


@pytest.mark.parametrize("damage", ["truncated", "garbage", "other-table", "wrong-types"])
def test_a_damaged_database_is_rebuilt_and_every_file_hashed_again(
    tmp_path: Path, damage: str
) -> None:
    """A stat cache that does not read is a cache lost, never a digest trusted."""
    import sqlite3

    db = tmp_path / "state" / "stat.sqlite"
    path = tmp_path / "f.txt"
    path.write_bytes(b"one")
    st = old_stat(path)
    first = StatCache(db)
    first.digest(path, st)
    first.flush()
    if damage == "truncated":
        db.write_bytes(db.read_bytes()[:100])
    elif damage == "garbage":
        db.write_bytes(b"\x00\xffnot sqlite" * 50)
    elif damage == "other-table":
        db.unlink()
        with sqlite3.connect(db) as conn:
            conn.execute("CREATE TABLE stat (path TEXT, digest TEXT)")
            conn.execute("INSERT INTO stat VALUES (?, ?)", (str(path), b3(b"one")))
    else:  # the right columns, values of the wrong type: no key ever matches
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE stat SET dev = 'x', ino = 'y', racy = 0")
    path.write_bytes(b"two")  # the input changed; its stat key is presented as before
    second = StatCache(db)
    assert second.digest(path, st) == b3(b"two")
    assert second.hashed == 1
    second.flush()
    assert StatCache(db).digest(path, st) == b3(b"two")  # rebuilt, usable again
