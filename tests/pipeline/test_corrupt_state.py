"""Corrupt state files never make a build do less work (issue 27, item 6).

A built project, an input change that needs work (a sealed grading file: the probe and
grade cells), then one state file damaged: truncated, garbage, JSON (or SQLite) of the
wrong shape, or a stale copy taken before the change that is valid and claims "up to
date". The build still runs the changed cells. A damaged release lock, withdrawals file
or calibration is refused instead, with one line naming the file (exit 2).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from recon.store.statcache import RACY_NS
from tests.conftest import Build, clone_built, doit, recon, tiny_project

STATE = {
    "setup": "store/state/setup/noop.json",
    "stamp": "store/state/stamps/tiny.json",
    "stat": "store/state/stat.sqlite",
}
FORMS = ("truncated", "garbage", "shape", "stale")
GRADING = "cases/html5-boilerplate/sealed/grading.yaml"
GRADE = "grade:tiny-native.scripted-faithful.html5-boilerplate.0"


def _settle() -> None:
    time.sleep(RACY_NS / 1e9 + 0.2)


@pytest.fixture(scope="module")
def settled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny release built, then built again once nothing is racy: every state file
    written (the setup cache, the stamp, the stat cache) and a no-op taking the fast path;
    with a copy of each state file in ``saved/``."""
    project = tiny_project(tmp_path_factory.mktemp("state") / "p")
    doit(project, "release:tiny")
    _settle()
    doit(project, "release:tiny")
    _settle()
    fast = doit(project, "release:tiny")
    assert fast.stdout.count("-- ") == 1, fast.stdout  # the no-op took the fast path
    for rel in STATE.values():
        assert (project / rel).is_file(), rel
        saved = project / "saved" / rel
        saved.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(project / rel, saved)
    return project


def _damage(project: Path, which: str, form: str) -> None:
    path = project / STATE[which]
    if form == "stale":  # the copy from before the change: valid, and it says up to date
        shutil.copy2(project / "saved" / STATE[which], path)
        return
    for extra in ("-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)
    data = path.read_bytes()
    if form == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif form == "garbage":
        path.write_bytes(bytes(range(256)) * 8)
    elif which == "stat":  # a database of another shape
        path.unlink()
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE stat (path TEXT PRIMARY KEY, digest TEXT)")
    else:  # JSON of the wrong shape
        path.write_text('{"digest": ["up", "to", "date"], "releases": 5, "check": null}')


def _changed(settled: Path, dest: Path) -> Path:
    project = clone_built(settled, dest)
    grading = project / GRADING
    grading.write_text(grading.read_text() + "\n# a comment: a new digest, same checks\n")
    return project


def _did_the_work(build: Build) -> None:
    assert build.code == 0, build.stdout + build.stderr
    assert build.executed["probe"] >= 1 and build.executed["grade"] >= 1, build.stdout
    assert GRADE in build.ran + build.reused, build.stderr


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("which", sorted(STATE))
def test_a_damaged_state_file_never_skips_a_changed_cell(
    settled: Path, tmp_path: Path, which: str, form: str
) -> None:
    project = _changed(settled, tmp_path / "p")
    _damage(project, which, form)
    _did_the_work(doit(project, "release:tiny", check=False))


@pytest.mark.slow
@pytest.mark.browser
def test_an_edit_that_keeps_size_and_mtime_is_still_seen(settled: Path, tmp_path: Path) -> None:
    """The same bytes count, the old mtime put back (``touch -r``): only ctime moved."""
    project = clone_built(settled, tmp_path / "p")
    grading = project / GRADING
    grading.write_text(grading.read_text() + "# note: aaaa\n")
    doit(project, "release:tiny")
    _settle()
    doit(project, "release:tiny")  # nothing racy now: stamped
    before = grading.stat()
    grading.write_text(grading.read_text().replace("# note: aaaa", "# note: bbbb"))
    os.utime(grading, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = grading.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    _did_the_work(doit(project, "release:tiny", check=False))


@pytest.mark.slow
@pytest.mark.browser
def test_a_lock_from_before_a_change_refuses_the_build_never_skips_it(
    settled: Path, tmp_path: Path
) -> None:
    """A frozen release whose lock is valid but older than its inputs is refused (exit 2,
    naming what changed), and a lock naming another release is refused too."""
    project = clone_built(settled, tmp_path / "p")
    frozen = recon(project, "release", "freeze", "tiny")
    assert frozen.returncode == 0, frozen.stderr
    grading = project / GRADING
    grading.write_text(grading.read_text() + "\n# changed after the freeze\n")
    refused = doit(project, "release:tiny", check=False)
    assert refused.code == 2, refused.stdout + refused.stderr
    assert "releases/tiny.lock" in refused.stderr and "html5-boilerplate" in refused.stderr
    assert refused.ran == [] and refused.executed["grade"] == 0
    lock = project / "releases/tiny.lock"
    lock.write_text(lock.read_text().replace('"release": "tiny"', '"release": "demo"'))
    other = doit(project, "release:tiny", check=False)
    assert other.code == 2 and "releases/tiny.lock" in other.stderr, other.stderr
    assert "Traceback" not in other.stderr
