"""A full disk under the store (issue 27): the build fails with one error naming the disk,
nothing half-written is left, and once space is freed the store verifies clean and the
build completes."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import doit, recon, tiny_project

SMALL = "400k"  # the tiny release's store takes about 1.2 MB


@pytest.fixture
def small_store(tmp_path: Path) -> Iterator[Path]:
    """A project whose store is a tmpfs of :data:`SMALL` (needs root to mount)."""
    project = tiny_project(tmp_path / "p")
    store = project / "store"
    store.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SMALL}", "tmpfs",
                              str(store)], capture_output=True, text=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs as the store: {mounted.stderr.strip()}")
    try:
        yield project
    finally:
        subprocess.run(["umount", "-l", str(store)], check=False)


@pytest.mark.slow
@pytest.mark.browser
def test_a_full_disk_fails_the_build_once_and_leaves_nothing_half_written(
    small_store: Path,
) -> None:
    project = small_store
    store = project / "store"
    failed = doit(project, "release:tiny", check=False)
    said = failed.stdout + failed.stderr
    assert failed.code != 0
    errors = [ln for ln in said.splitlines() if "no space left" in ln and "[recon]" not in ln]
    assert len(errors) == 1, said[-3000:]  # one error (a cache not saved is only a note)
    assert f"no space left on the disk holding {store}" in errors[0]
    assert f"(mounted at {store}," in errors[0] and "free space there" in errors[0]
    assert "Traceback" not in said, said[-3000:]
    assert [p for p in store.rglob("*") if p.name.startswith(".tmp-")] == []
    assert not (project / "releases/tiny/release.json").exists()  # nothing published

    subprocess.run(["mount", "-o", "remount,size=64m", str(store)], check=True)
    verified = recon(project, "store", "verify")
    assert verified.returncode == 0 and verified.stdout.startswith("clean"), verified.stdout
    doit(project, "release:tiny")
    assert (project / "releases/tiny/release.json").is_file()
    assert not (project / "releases/tiny/stale.json").exists()
    assert recon(project, "store", "verify").returncode == 0
