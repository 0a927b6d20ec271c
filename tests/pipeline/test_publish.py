"""Publishing (issue 27): a failed build never leaves old numbers looking current, and a
build killed while it publishes never leaves a half-written release."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from doit.exceptions import TaskError, TaskFailed, UnmetDependency

from recon.model import FailedCell, StaleMark
from recon.pipeline.noop import CellRef
from recon.pipeline.progress import Tracker
from recon.pipeline.publish import clear_leftovers, mark_stale
from recon.pipeline.view import ProgressReporter
from recon.site.stale import START, mark_page, unmark_page
from tests.conftest import clone_built, doit, doit_env, published, recon

PAGE = b"<!doctype html>\n<html><head><title>x</title></head>\n<body class='a'>\n<p>1.0</p>\n"


def _mark(*cells: str) -> StaleMark:
    failed = [FailedCell(cell=c, error=f"{c}: it <broke> & stopped") for c in cells]
    return StaleMark(release="demo", at="2026-01-01T00:00:00Z", failed=failed)


def test_the_banner_names_the_failed_cells_escaped_and_is_replaced_not_stacked() -> None:
    once = mark_page(PAGE, _mark("grade:a.b.0"))
    assert once.count(START) == 1 and b"grade:a.b.0" in once
    assert b"it &lt;broke&gt; &amp; stopped" in once and b"<broke>" not in once
    assert once.index(START) > once.index(b"<body class='a'>")
    twice = mark_page(once, _mark("probe:c"))
    assert twice.count(START) == 1 and b"probe:c" in twice and b"grade:a.b.0" not in twice
    assert unmark_page(twice) == PAGE


def test_marking_keeps_the_release_files_and_bans_every_page(tmp_path: Path) -> None:
    out = tmp_path / "releases" / "demo"
    (out / "site" / "runs").mkdir(parents=True)
    (out / "release.json").write_text('{"a": 1}\n')
    (out / "site" / "index.html").write_bytes(PAGE)
    (out / "site" / "runs" / "r.html").write_bytes(PAGE)
    (out / "site" / "runs" / "r.html").chmod(0o444)
    (out / "site" / "style.css").write_bytes(b"body{}")
    mark_stale(tmp_path, "demo", _mark("grade:a.b.0").failed)
    assert (out / "release.json").read_text() == '{"a": 1}\n'
    assert (out / "site" / "style.css").read_bytes() == b"body{}"
    for page in ("index.html", "runs/r.html"):
        assert START in (out / "site" / page).read_bytes()
    saved = json.loads((out / "stale.json").read_text())
    assert saved["failed"][0]["cell"] == "grade:a.b.0" and saved["release"] == "demo"
    assert not [p for p in tmp_path.joinpath("releases").iterdir() if p.name.startswith(".")]


def test_leftovers_of_a_dead_build_are_removed_a_live_ones_kept(tmp_path: Path) -> None:
    dead = tmp_path / ".demo.staging-999999999-abc"
    live = tmp_path / f".demo.staging-{__import__('os').getpid()}-abc"
    other = tmp_path / ".suite.staging-999999999-abc"
    for folder in (dead, live, other):
        folder.mkdir()
    assert clear_leftovers(tmp_path, "demo") == [dead]
    assert live.is_dir() and other.is_dir()


def test_the_reporter_names_each_release_s_failed_cells_not_their_dependents(
    tmp_path: Path,
) -> None:
    cells = {"demo": [CellRef("grade", "a.0", {}), CellRef("grade", "a.1", {})]}
    reporter = ProgressReporter(Tracker(tmp_path, "local"), {}, cells, "plain", None)
    try:
        raise OSError(28, "No space left on device")
    except OSError as err:
        crashed = TaskError("PythonAction Error", err)
    reporter.add_failure(SimpleNamespace(name="grade:a.0", title=lambda: "grade:a.0"),
                         TaskFailed("grade:a.0: regions[0]: matches nothing\nmore"))  # fmt: skip
    reporter.add_failure(SimpleNamespace(name="grade:a.1", title=lambda: "grade:a.1"), crashed)
    reporter.add_failure(SimpleNamespace(name="release:demo", title=lambda: "release:demo"),
                         UnmetDependency("grade:a.0"))  # fmt: skip
    found = reporter.failed_by_release(["demo", "other"])
    assert list(found) == ["demo"]
    assert [(f.cell, f.error) for f in found["demo"]] == [
        ("grade:a.0", "grade:a.0: regions[0]: matches nothing"),
        ("grade:a.1", "OSError: [Errno 28] No space left on device"),
    ]


def _pages(folder: Path) -> list[Path]:
    return sorted((folder / "site").rglob("*.html"))


@pytest.mark.slow
@pytest.mark.browser
def test_a_failed_build_marks_every_page_stale_until_a_build_succeeds(
    built_tiny: Path, tmp_path: Path
) -> None:
    project = clone_built(built_tiny, tmp_path / "p")
    out = project / "releases" / "tiny"
    before = published(out)
    reference = project / "cases/html5-boilerplate/sealed/reference/index.html"
    aside = tmp_path / "index.html"
    shutil.move(reference, aside)  # the grade cell now raises a HarnessError

    failed = doit(project, "release:tiny", check=False)
    assert failed.code != 0
    mark = json.loads((out / "stale.json").read_text())
    cell = "grade:tiny-native.scripted-faithful.html5-boilerplate.0"
    assert [f["cell"] for f in mark["failed"]] == [cell], mark
    assert "matches nothing in the reference" in mark["failed"][0]["error"]
    pages = _pages(out)
    assert len(pages) >= 4
    for page in pages:
        text = page.read_text()
        assert text.count("<!-- recon:stale -->") == 1 and cell in text, page
        assert "Stale: these numbers are not current." in text, page
    for name in ("release.json", "manifest.json", "runs.json"):
        assert (out / name).read_bytes() == before[name]  # the stale mark is never in them
    status = recon(project, "status", "tiny")
    assert status.returncode == 0 and "STALE" in status.stdout and cell in status.stdout
    shown = json.loads(recon(project, "status", "tiny", "--json").stdout)
    assert shown["stale"]["failed"][0]["cell"] == cell
    compared = recon(project, "diff", "tiny", "tiny")
    assert compared.returncode == 0 and "STALE" in compared.stderr and cell in compared.stderr

    shutil.move(aside, reference)  # fixed: the same inputs as the first build
    fixed = doit(project, "release:tiny")
    assert fixed.executed["release"] == 1, fixed.stdout  # republished though nothing moved
    assert published(out) == before  # byte for byte the first build's release
    assert "STALE" not in recon(project, "status", "tiny").stdout


def _staging(project: Path, pid: int) -> bool:
    mine = f".tiny.staging-{pid}-"
    return any(p.name.startswith(mine) for p in (project / "releases").iterdir())


def _publish_then_kill(project: Path, delay: float) -> int:
    """Start a build whose only work is to publish again, SIGKILL it ``delay`` seconds
    after its staging folder appears; its exit code (-9 when the kill landed)."""
    doit(project, "forget", "release:tiny")
    build = subprocess.Popen([sys.executable, "-m", "doit", "release:tiny"], cwd=project,
                             env=doit_env(project), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)  # fmt: skip
    while build.poll() is None and not _staging(project, build.pid):
        time.sleep(0.0002)  # the publish has started once its staging folder exists
    time.sleep(delay)  # a random point of the publish (any point must be safe)
    build.send_signal(signal.SIGKILL)
    return build.wait(timeout=600)


@pytest.mark.slow
@pytest.mark.browser
def test_a_build_killed_while_it_publishes_leaves_the_old_release_whole(
    built_tiny: Path, tmp_path: Path
) -> None:
    project = clone_built(built_tiny, tmp_path / "p")
    out = project / "releases" / "tiny"
    before = published(out)
    chance = random.Random(27)
    codes, midway = [], 0
    while midway < 4 and len(codes) < 30:  # a busy machine may let a publish end first
        codes.append(_publish_then_kill(project, chance.uniform(0.0, 0.05)))
        assert published(out) == before  # the complete old one (= the new one), never half
        assert not (out / "stale.json").exists()
        midway += any(p.name.startswith(".tiny.staging-") for p in out.parent.iterdir())
        clear_leftovers(out.parent, "tiny")  # so the next kill's leftover is its own
    assert midway, codes  # kills landed inside the publish (its staging folder was left)
    (out.parent / ".tiny.staging-999999999-x").mkdir()  # a killed build's leftover
    doit(project, "forget", "release:tiny")
    doit(project, "release:tiny")  # publishes again: removes it
    assert published(out) == before
    assert [p.name for p in out.parent.iterdir() if p.name.startswith(".")] == []


def test_an_interrupted_build_is_saved_unfinished_and_neither_published_nor_marked(
    tmp_path: Path,
) -> None:
    told: list[str] = []
    cells = {"demo": [CellRef("grade", "a.0", {})]}
    tracker = Tracker(tmp_path, "local")
    reporter = ProgressReporter(tracker, {}, cells, "plain", None,
                                on_success=lambda built, ran: told.append("success"),
                                on_failure=lambda failed: told.append("failure"))  # fmt: skip
    reporter.initialize({}, ["release:demo"])
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt:  # doit calls complete_run from a finally as ^C goes by
        reporter.complete_run()
    (snap,) = tracker.snapshots()
    assert not snap.finished and snap.ok is None and told == []
    reporter.complete_run()  # a build that ends on its own is finished
    (snap,) = tracker.snapshots()
    assert snap.finished and snap.ok is True and told == ["success"]
