"""The action cache: cell key -> record, write-once, durable across instances."""

from __future__ import annotations

import stat
from pathlib import Path

import blake3
import pytest

from recon.store import ActionCache


def key(name: str) -> str:
    return blake3.blake3(name.encode()).hexdigest()


@pytest.fixture
def cache(tmp_path: Path) -> ActionCache:
    return ActionCache(tmp_path / "store")


def test_get_of_a_missing_key_is_none(cache: ActionCache) -> None:
    assert cache.get(key("never")) is None


def test_put_then_get_returns_the_record(cache: ActionCache, tmp_path: Path) -> None:
    record = {"kind": "grade", "outputs": {"table": {"digest": key("t"), "type": "blob"}}}
    assert cache.put(key("a"), record) is True
    assert cache.get(key("a")) == record
    assert ActionCache(tmp_path / "store").get(key("a")) == record  # durable on disk


def test_second_put_returns_false_and_keeps_the_first_record(cache: ActionCache) -> None:
    first = {"run": 1}
    assert cache.put(key("a"), first) is True
    assert cache.put(key("a"), {"run": 2}) is False
    assert cache.get(key("a")) == first
    assert ActionCache(cache.root.parent).put(key("a"), {"run": 3}) is False
    assert cache.get(key("a")) == first


def test_records_are_read_only_files_without_temp_leftovers(cache: ActionCache) -> None:
    cache.put(key("a"), {"x": 1})
    files = [p for p in cache.root.rglob("*") if p.is_file()]
    assert files == [cache.root / key("a")[:2] / f"{key('a')}.json"]
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o444
    assert files[0].read_bytes() == b'{"x":1}'  # canonical JSON


def test_keys_lists_every_recorded_key_sorted(cache: ActionCache) -> None:
    assert list(cache.iter_keys()) == []
    names = [key(n) for n in ("a", "b", "c", "d")]
    for k in names:
        cache.put(k, {"k": k})
    assert list(cache.iter_keys()) == sorted(names)


def test_remove_forgets_a_key_and_allows_a_new_record(cache: ActionCache) -> None:
    cache.put(key("a"), {"v": 1})
    cache.put(key("b"), {"v": 2})
    cache.remove(key("a"))
    cache.remove(key("never"))  # removing a missing key is not an error
    assert cache.get(key("a")) is None
    assert list(cache.iter_keys()) == [key("b")]
    assert cache.put(key("a"), {"v": 3}) is True
    assert cache.get(key("a")) == {"v": 3}
