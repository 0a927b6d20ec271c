"""Live progress (issue 16): the plain view's counts, the tracker's arithmetic, the choices."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from recon.errors import ConfigError
from recon.model import BuildProgress
from recon.pipeline.executor import ExecutorChoice
from recon.pipeline.progress import Tracker, snapshot_path
from recon.pipeline.runtime import Cell
from recon.pipeline.view import choose_view, line, rich_table, summary
from tests.conftest import Build

PROGRESS = re.compile(
    r"^\[recon\] progress (\S+)  done (\d+)/(\d+) \(ran (\d+), reused (\d+), up to date (\d+)\)"
    r"  running (\d+)  failed (\d+)",
    re.MULTILINE,
)


@pytest.mark.slow
@pytest.mark.browser
def test_plain_progress_counts_are_monotone_and_match_the_cells_run(
    built_demo: tuple[Path, Build],
) -> None:
    project, build = built_demo
    rows = [tuple(int(g) for g in m.groups()[1:]) for m in PROGRESS.finditer(build.stderr)]
    assert rows, build.stderr[-2000:]
    for before, after in itertools.pairwise(rows):
        for col in (0, 2, 3, 4, 6):  # done, ran, reused, up to date, failed only grow
            assert after[col] >= before[col], (before, after)
    done, total, ran, reused, uptodate, running, failed = rows[-1]
    assert (done, running, failed, uptodate) == (total, 0, 0, 0)
    assert ran == len(build.ran) and reused == len(build.reused)
    assert len(rows) == ran + reused  # one line per cell that ran or was reused
    snap = BuildProgress.model_validate_json(snapshot_path(project / "store", "demo").read_text())
    assert snap.finished and snap.ok and snap.totals().ran == ran
    assert "[recon] summary demo" in build.stderr


def _cells() -> list[Cell]:
    attempts = [Cell("attempt", f"a{i}", {"entry": "e1" if i < 2 else "e2"}) for i in range(3)]
    grades = [Cell("grade", f"a{i}") for i in range(3)]
    return [*attempts, *grades]


def test_tracker_counts_add_up_and_estimate_what_is_left(tmp_path: Path) -> None:
    cells = _cells()
    tracker = Tracker(tmp_path, "local")
    tracker.track("r", cells)
    seen: list[str] = []
    tracker.listeners.append(lambda build, what: seen.append(line(build.snapshot())))
    tracker.finished(cells[3], "uptodate", 0.0, None)
    tracker.started(cells[0])
    tracker.started(cells[1])
    snap = tracker.builds[0].snapshot()
    assert snap.kinds["attempt"].running == 2 and snap.entries["e1"].running == 2
    assert snap.eta_s is None  # nothing of a pending kind has run yet
    tracker.finished(cells[0], "ran", 10.0, None)
    tracker.finished(cells[1], "reused", 0.0, None)
    tracker.failed(cells[2])
    snap = tracker.builds[0].snapshot()
    attempt, grade = snap.kinds["attempt"], snap.kinds["grade"]
    assert (attempt.ran, attempt.reused, attempt.failed, attempt.running) == (1, 1, 1, 0)
    assert (grade.uptodate, grade.pending) == (1, 2)
    assert snap.concurrency == 2
    assert snap.eta_s == 10.0  # 2 grades left at the overall mean (10 s), over 2 at once
    assert snap.entries["e2"].failed == 1
    tracker.complete(ok=False)
    saved = BuildProgress.model_validate_json(snapshot_path(tmp_path, "r").read_text())
    assert saved.finished and saved.ok is False and saved.totals().done == 3
    assert "finished, with failures" in summary(saved)[-1]
    assert seen[-1].startswith("[recon] progress r  done 3/6")


def test_bad_choices_are_one_clear_error() -> None:
    with pytest.raises(ConfigError, match="executor=slurm: unknown executor"):
        ExecutorChoice.from_vars("slurm", None)
    with pytest.raises(ConfigError, match="an address needs `executor=ray`"):
        ExecutorChoice.from_vars("local", "127.0.0.1:1")
    with pytest.raises(ConfigError, match="progress=fancy: unknown progress view"):
        choose_view("fancy")
    assert ExecutorChoice.from_vars("ray", None).name == "ray"
    assert choose_view("plain") == "plain"


def test_lost_and_resubmitted_cells_are_counted_by_kind(tmp_path: Path) -> None:
    cells = _cells()
    tracker = Tracker(tmp_path, "ray")
    tracker.track("r", cells)
    quiet = tracker.builds[0].snapshot()
    assert "lost" not in line(quiet) and not any("lost" in row for row in summary(quiet))
    tracker.started(cells[0])
    tracker.lost(cells[0], resubmitted=True)  # an attempt's try lost, retried at once
    tracker.lost(cells[3], resubmitted=True)
    tracker.lost(cells[3], resubmitted=False)  # the same grade lost past its limit
    tracker.finished(cells[0], "ran", 1.0, None)
    snap = tracker.builds[0].snapshot()
    assert snap.kinds["attempt"].lost == 1 and snap.kinds["attempt"].resubmitted == 1
    assert (snap.kinds["grade"].lost, snap.kinds["grade"].resubmitted) == (2, 1)
    assert "  failed 0  lost 3 (resubmitted 2)  " in line(snap)
    lost = "lost 3 (resubmitted 2): attempt 1 (resubmitted 1), grade 2 (resubmitted 1)"
    assert f"workers lost under cells: {lost}" in summary(snap)
    assert tracker.losses("r") == {"attempt": (1, 1), "grade": (2, 1)}
    assert tracker.losses("other") == {}
    saved = BuildProgress.model_validate_json(snapshot_path(tmp_path, "r").read_text())
    assert saved.totals().lost == 3  # written at once, as `recon status --json` reads it
    assert lost in rich_table(snap).caption
