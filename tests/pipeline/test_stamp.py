"""The release-level no-op check (issue 16): a stamp of every file's stat key lets a no-op
skip visiting the cells, which stay doit tasks; any change falls back to doit's checks."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from recon.pipeline.stamp import ReleaseStamp, plain_run, requested
from recon.store.statcache import RACY_NS
from tests.conftest import Build, clone_built, doit


def test_only_a_plain_run_takes_the_fast_path() -> None:
    assert plain_run(["doit"]) and plain_run(["doit", "release:demo", "executor=ray"])
    assert plain_run(["doit", "-n", "2", "-P", "thread", "run", "release:demo"])
    assert not plain_run(["doit", "-a", "release:demo"])
    assert not plain_run(["doit", "list", "--all"]) and not plain_run(["doit", "info", "x"])
    assert not plain_run(["doit", "forget", "release:demo"])
    assert not plain_run(["doit", "-n", "2", "list"]) and plain_run(["doit", "-v", "2", "run"])


def test_only_the_releases_a_run_builds_need_their_stamp() -> None:
    both = {"demo", "suite"}
    assert requested(["doit", "release:demo", "executor=ray"], both) == {"demo"}
    assert requested(["doit", "-n", "2", "run", "release:suite"], both) == {"suite"}
    assert requested(["doit"], both) == both and requested(["doit", "release"], both) == both
    assert requested(["doit", "release:demo", "capture:demo-native.x.todomvc.1"], both) == both


def test_a_stamp_holds_until_a_stat_key_or_a_fact_moves(tmp_path: Path) -> None:
    files = [tmp_path / f"f{i}" for i in range(3)]
    for f in files:
        f.write_text("x")
    path = tmp_path / "stamp.json"
    stamp = ReleaseStamp(path, {"code": "a"}, [str(f) for f in files])
    assert not stamp.save() and not path.exists()  # just written: racy, never stamped
    time.sleep(RACY_NS / 1e9 + 0.2)
    assert stamp.save() and stamp.holds()
    assert ReleaseStamp(path, {"code": "a"}, [str(f) for f in files]).holds()
    assert not ReleaseStamp(path, {"code": "b"}, [str(f) for f in files]).holds()
    assert not ReleaseStamp(path, {"code": "a"}, [str(f) for f in files[:2]]).holds()
    files[1].write_text("y")
    assert not ReleaseStamp(path, {"code": "a"}, [str(f) for f in files]).holds()


@pytest.mark.slow
@pytest.mark.browser
def test_a_stamped_no_op_visits_no_cell_and_an_edit_falls_back(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = clone_built(built_demo[0], tmp_path / "p")
    stamp = project / "store/state/stamps/demo.json"
    time.sleep(RACY_NS / 1e9 + 0.2)
    first = doit(project, "release:demo")  # a copy: new inodes, so doit checks every task
    assert sum(first.executed.values()) == 0 and first.stdout.count("-- ") > 70
    assert stamp.is_file()
    fast = doit(project, "release:demo")
    assert sum(fast.executed.values()) == 0 and fast.ran == [] and fast.reused == []
    assert fast.stdout.count("-- ") == 1, fast.stdout  # only release:demo was looked at
    status = json.loads((project / "store/state/progress/demo.json").read_text())
    assert all(k["uptodate"] == k["total"] for k in status["kinds"].values())
    listed = doit(project, "list", "--all")
    assert "capture:demo-native.scripted-starter.todomvc.1" in listed.stdout
    grading = project / "cases/todomvc/sealed/grading.yaml"
    grading.write_text(grading.read_text() + "\n# a comment: a new digest, same checks\n")
    slow = doit(project, "release:demo")
    assert slow.executed["probe"] > 0 and slow.executed["grade"] > 0, slow.stdout
