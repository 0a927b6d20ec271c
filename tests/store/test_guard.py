"""Builds and gc in one store (issue 27): every build holds ``gc.lock`` shared, gc takes it
alone, so it waits for the builds; a full disk is one error that names it."""

from __future__ import annotations

import errno
import fcntl
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recon.errors import StoreError
from recon.store import Store, StoreGuard, write_atomic
from recon.store.disk import DiskFull, mount_of, space_for
from tests.conftest import doit, doit_env, published, recon, tiny_project


def test_builds_share_the_store_and_gc_waits_for_them(tmp_path: Path) -> None:
    a, b = StoreGuard(tmp_path), StoreGuard(tmp_path)
    a.share()
    b.share(waiting=lambda: pytest.fail("two builds never wait for each other"))
    waited: list[str] = []

    def release_builds() -> None:  # gc is told once, and waits until they end
        waited.append("gc waited")
        a.release()
        b.release()

    with StoreGuard(tmp_path).exclusive(waiting=release_builds):
        late = StoreGuard(tmp_path)
        with pytest.raises(BlockingIOError):
            late._take(fcntl.LOCK_SH | fcntl.LOCK_NB, lambda: None)  # a build would wait
    assert waited == ["gc waited"]
    StoreGuard(tmp_path).share(waiting=lambda: pytest.fail("gc is over: no wait"))


def test_a_full_disk_is_one_error_naming_the_disk_and_the_fix(tmp_path: Path) -> None:
    target = tmp_path / "store" / "objects"
    with pytest.raises(DiskFull) as found, space_for(target):
        raise OSError(errno.ENOSPC, "No space left on device")
    text = str(found.value)
    assert str(target) in text and str(mount_of(target)) in text and "free space" in text
    with pytest.raises(DiskFull), space_for(target):
        raise sqlite3.OperationalError("database or disk is full")
    with pytest.raises(PermissionError), space_for(target):  # other errors pass through
        raise PermissionError(errno.EACCES, "denied")


def test_a_write_that_runs_out_of_space_leaves_nothing_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store")
    kept = store.put_bytes(b"already there")
    real = os.fsync

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(DiskFull):
        store.put_bytes(b"a new object")
    with pytest.raises(DiskFull):
        write_atomic(tmp_path / "store" / "cells" / "x.json", b"{}")
    monkeypatch.setattr(os, "fsync", real)
    assert list(store.iter_digests()) == [kept]
    leftovers = [p for p in (tmp_path / "store").rglob("*") if p.name.startswith(".tmp-")]
    assert leftovers == [] and not (tmp_path / "store" / "cells" / "x.json").exists()


def _free_to_collect(store_root: Path) -> bool:
    """Whether no build holds the store now (gc could take it at once)."""
    probe = StoreGuard(store_root)
    try:
        probe._take(fcntl.LOCK_EX | fcntl.LOCK_NB, lambda: None)
    except BlockingIOError:
        return False
    finally:
        probe.release()
    return True


def _comparable(folder: Path) -> dict[str, bytes]:
    """A published release without run metadata (wall times differ between builds)."""
    found = published(folder)
    return {k: v for k, v in found.items() if k not in ("runs.json", "site/data/runs.js")}


@pytest.mark.slow
@pytest.mark.browser
def test_two_builds_in_one_store_while_gc_runs_give_a_clean_store_and_the_same_release(
    built_tiny: Path, tmp_path: Path
) -> None:
    clean = built_tiny  # read only: a build of its own, in a store no gc touched
    project = tiny_project(tmp_path / "p")
    env = doit_env(project)
    builds = [
        subprocess.Popen([sys.executable, "-m", "doit", "release:tiny"], cwd=project, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for _ in range(2)
    ]  # fmt: skip
    store = project / "store"
    while _free_to_collect(store) and all(b.poll() is None for b in builds):
        time.sleep(0.05)  # until a build holds the store (or both ended already)
    collected = []
    while any(b.poll() is None for b in builds) and len(collected) < 200:
        collected.append(recon(project, "store", "gc"))
    logs = [b.communicate(timeout=1800)[0] for b in builds]
    assert [b.returncode for b in builds] == [0, 0], logs
    assert collected and all(c.returncode == 0 for c in collected), collected
    assert "waiting for the builds using" in collected[0].stderr  # it ran under a build
    assert recon(project, "store", "gc").returncode == 0
    verified = recon(project, "store", "verify")
    assert verified.returncode == 0 and verified.stdout.startswith("clean"), verified.stdout
    assert _comparable(project / "releases/tiny") == _comparable(clean / "releases/tiny")
    again = doit(project, "release:tiny")
    assert again.ran == [], again.stderr  # nothing was lost to the collections


def test_a_store_whose_lock_cannot_be_opened_is_one_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("a file where the state folder should be")
    with pytest.raises(StoreError) as found:
        StoreGuard(tmp_path).share()
    assert str(tmp_path / "state" / "gc.lock") in str(found.value)
