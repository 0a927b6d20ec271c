"""Store blobs: blake3 names, sharded read-only objects, atomic writes, clear errors."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import blake3
import pytest

from recon.errors import StoreError
from recon.store import Store, canonical_json
from recon.store import atomic as atomic_module
from recon.store.atomic import write_atomic


def b3(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()


def stray_files(root: Path) -> list[Path]:
    """Anything under ``root`` that is not a finished object (temp files, partial writes)."""
    return [
        p
        for p in root.rglob("*")
        if p.is_file() and (p.name.startswith(".") or p.parent.name != p.name[:2])
    ]


def test_put_bytes_names_the_object_by_its_blake3_digest(store: Store) -> None:
    data = b"hello, store\n"
    digest = store.put_bytes(data)
    assert digest == b3(data)
    path = store.root / "objects" / digest[:2] / digest
    assert path.read_bytes() == data
    assert store.path(digest) == path
    assert store.has(digest)
    assert store.read_bytes(digest) == data


def test_put_file_streams_a_file_in_under_its_digest(store: Store, tmp_path: Path) -> None:
    source = tmp_path / "big.bin"
    data = os.urandom(3 << 20) + b"tail"  # spans several read chunks
    source.write_bytes(data)
    digest = store.put_file(source)
    assert digest == b3(data)
    assert (store.objects / digest[:2] / digest).read_bytes() == data


def test_put_json_stores_the_canonical_bytes(store: Store) -> None:
    value = {"b": [1, 2.5, "é"], "a": None}
    digest = store.put_json(value)
    assert digest == b3(b'{"a":null,"b":[1,2.5,"\xc3\xa9"]}')
    assert store.read_bytes(digest) == canonical_json(value)
    assert store.read_json(digest) == value
    assert store.put_json({"a": None, "b": [1, 2.5, "é"]}) == digest  # key order is irrelevant


def test_objects_are_read_only(store: Store, tmp_path: Path) -> None:
    source = tmp_path / "f.txt"
    source.write_bytes(b"from a file")
    for digest in (store.put_bytes(b"from bytes"), store.put_file(source), store.put_json([1])):
        assert stat.S_IMODE(store.path(digest).stat().st_mode) == 0o444


def test_re_putting_is_idempotent_and_leaves_the_object_alone(store: Store, tmp_path: Path) -> None:
    digest = store.put_bytes(b"same")
    before = store.path(digest).stat()
    source = tmp_path / "same.txt"
    source.write_bytes(b"same")
    assert store.put_bytes(b"same") == digest
    assert store.put_file(source) == digest
    after = store.path(digest).stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert list(store.iter_digests()) == [digest]
    assert stray_files(store.root) == []


def test_no_temp_files_are_left_behind(store: Store, tmp_path: Path) -> None:
    source = tmp_path / "f.txt"
    source.write_bytes(b"file")
    digests = {store.put_bytes(b"one"), store.put_json({"two": 2}), store.put_file(source)}
    everything = sorted(p for p in store.root.rglob("*") if p.is_file())
    assert everything == sorted(store.path(d) for d in digests)
    assert set(store.iter_digests()) == digests


def test_failed_put_file_leaves_no_temp_file(store: Store, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        store.put_file(tmp_path / "does-not-exist")
    assert stray_files(store.root) == []
    assert list(store.iter_digests()) == []


def test_missing_object_raises_store_error_naming_the_fix(store: Store) -> None:
    digest = b3(b"never stored")
    assert not store.has(digest)
    with pytest.raises(StoreError) as err:
        store.read_bytes(digest)
    message = str(err.value)
    assert digest in message
    assert "recon store verify" in message
    assert err.value.exit_code == 1


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "abc",
        "A" * 64,  # upper case
        "g" * 64,
        "a" * 63,
        "a" * 65,
        "../" + "a" * 61,
    ],
)
def test_a_bad_digest_string_is_refused(store: Store, bad: str) -> None:
    with pytest.raises(StoreError, match="not a blake3 digest"):
        store.path(bad)
    with pytest.raises(StoreError, match="not a blake3 digest"):
        store.read_bytes(bad)
    with pytest.raises(StoreError, match="not a blake3 digest"):
        store.has(bad)


def test_iter_digests_of_an_empty_store_is_empty(store: Store) -> None:
    assert list(store.iter_digests()) == []


def test_copy_out_writes_a_writable_copy_with_the_given_mode(store: Store, tmp_path: Path) -> None:
    digest = store.put_bytes(b"#!/bin/sh\n")
    dest = tmp_path / "out" / "deep" / "run.sh"
    store.copy_out(digest, dest, mode=0o755)
    assert dest.read_bytes() == b"#!/bin/sh\n"
    assert stat.S_IMODE(dest.stat().st_mode) == 0o755
    assert stat.S_IMODE(store.path(digest).stat().st_mode) == 0o444


# write_atomic ------------------------------------------------------------------


def test_write_atomic_writes_data_and_mode(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "file.json"
    write_atomic(target, b"{}", mode=0o444)
    assert target.read_bytes() == b"{}"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444
    assert [p.name for p in target.parent.iterdir()] == ["file.json"]


def test_write_atomic_crash_keeps_old_content_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "pointer.json"
    write_atomic(target, b"old content")

    def crash(src: str, dst: str) -> None:
        assert Path(src).read_bytes() == b"new content"  # the temp file was fully written
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(atomic_module.os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        write_atomic(target, b"new content")
    monkeypatch.undo()

    assert target.read_bytes() == b"old content"
    assert [p.name for p in tmp_path.iterdir()] == ["pointer.json"]
    write_atomic(target, b"new content")  # and the next write goes through
    assert target.read_bytes() == b"new content"


def test_store_crash_mid_install_leaves_no_object_and_no_temp_file(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.store import objects as objects_module

    def crash(src: str, dst: str) -> None:
        raise OSError("simulated crash before rename")

    monkeypatch.setattr(objects_module.os, "replace", crash)
    with pytest.raises(OSError, match="simulated crash"):
        store.put_bytes(b"half")
    monkeypatch.undo()
    assert not store.has(b3(b"half"))
    assert [p for p in store.root.rglob("*") if p.is_file()] == []
