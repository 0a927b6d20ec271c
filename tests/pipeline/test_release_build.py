"""The must-shows of the foundation: real doit builds of the demo release."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from recon.model import ReleaseDef
from recon.model.kinds import KINDS
from tests.conftest import REPO, Build, clone_built, copy_project, doit, doit_env, recon

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CASES = len(
    ReleaseDef.model_validate(yaml.safe_load((REPO / "releases/demo.yaml").read_text())).cases
)
"""The demo release's cases: each has 3 entries × 2 attempts, 4 of them valid."""

ALL_KINDS = set(KINDS)
"""Every kind of the kind table: the demo release makes cells of each."""


def test_cold_build_runs_every_cell_kind_and_ranks_by_policy(
    built_demo: tuple[Path, Build],
) -> None:
    project, build = built_demo
    assert set(build.ran_kinds()) == ALL_KINDS
    assert CASES >= 2 and build.ran_kinds()["attempt"] == 6 * CASES
    release = json.loads((project / "releases/demo/release.json").read_text())
    manifest = json.loads((project / "releases/demo/manifest.json").read_text())
    assert release["formal"] is False and "Non-formal" in release["formal_note"]
    by_entry = {e["entry"]: e for e in release["entries"]}
    assert by_entry["scripted-faithful"]["rank"] == 1
    assert by_entry["scripted-starter"]["rank"] == 2
    assert by_entry["scripted-faithful"]["score"] > by_entry["scripted-starter"]["score"]
    crash = by_entry["scripted-crash"]
    assert crash["ranked"] is False and crash["score"] is None and crash["rank"] is None
    assert [c["attempts"] for c in crash["cases"]] == [{"missing": 2}] * CASES
    overall = release["reliability"]["overall"]
    assert overall["by_outcome"] == {"missing": 2 * CASES, "valid": 4 * CASES}
    assert overall["tries"] == 6 * CASES and overall["harness_failure_rate"] == 0.0
    assert {c["kind"] for c in manifest["cells"]} == ALL_KINDS - {"manifest"}
    assert set(manifest["inputs"]["code"]) == ALL_KINDS
    assert (project / "releases/demo/site/index.html").is_file()


def test_second_build_executes_nothing_and_manifest_is_byte_identical(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = clone_built(built_demo[0], tmp_path / "p")
    before = (project / "releases/demo/manifest.json").read_bytes()
    again = doit(project, "release:demo")
    assert again.ran == [] and again.reused == []
    assert sum(again.executed.values()) == 0, again.stdout
    assert (project / "releases/demo/manifest.json").read_bytes() == before


def test_grader_edit_regrades_only(built_demo: tuple[Path, Build], tmp_path: Path) -> None:
    project = clone_built(built_demo[0], tmp_path / "p")
    grader = project / "recon/grade/compose.py"
    grader.write_text(grader.read_text() + "\n# a comment changes the grader's code digest\n")
    build = doit(project, "release:demo")
    # Only grades and what is downstream of them may execute. A comment leaves every grade
    # table identical, so the release JSON is unchanged and the site stays up to date.
    assert set(build.executed) <= {"grade", "aggregate", "site", "manifest", "release"}, (
        build.stdout
    )
    assert build.executed["grade"] == 6 * CASES and build.executed["manifest"] == 1
    # Grades are keyed on content: the two faithful (and the two starter) attempts built the
    # same bytes and the crashed ones none, so each distinct grade key runs once, then is reused.
    keys = {json.loads(p.read_text())["key"] for p in (project / "store/cells/grade").iterdir()}
    assert build.ran_kinds()["grade"] == len(keys) < 6 * CASES
    assert len([c for c in build.ran + build.reused if c.startswith("grade:")]) == 6 * CASES
    for kind in ("evidence", "workspace", "image", "attempt", "oracle", "capture", "probe"):
        assert build.ran_kinds()[kind] == 0 and build.executed[kind] == 0
    old = json.loads((built_demo[0] / "releases/demo/manifest.json").read_text())
    new = json.loads((project / "releases/demo/manifest.json").read_text())
    assert old["inputs"]["code"]["grade"] != new["inputs"]["code"]["grade"]
    assert old["inputs"]["code"]["capture"] == new["inputs"]["code"]["capture"]
    diff = recon(
        project,
        "diff",
        str(built_demo[0] / "releases/demo/manifest.json"),
        str(project / "releases/demo/manifest.json"),
    )
    assert diff.returncode == 1, diff.stderr
    assert "code.grade" in diff.stdout


def test_second_release_reuses_attempts_and_captures(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = clone_built(built_demo[0], tmp_path / "p")
    (project / ".doit.db").unlink()  # reuse must come from the action cache, not doit's state
    text = (project / "releases/demo.yaml").read_text()
    text = text.replace("id: demo", "id: second").replace(
        "entries: [scripted-faithful, scripted-starter, scripted-crash]",
        "entries: [scripted-starter, scripted-faithful]",
    )
    (project / "releases/second.yaml").write_text(text)
    build = doit(project, "release:second")
    for kind in ("attempt", "capture", "oracle", "probe", "grade"):
        assert build.ran_kinds()[kind] == 0, build.stderr
    assert len([c for c in build.reused if c.startswith("attempt:")]) == 4 * CASES
    release = json.loads((project / "releases/second/release.json").read_text())
    assert [e["entry"] for e in release["entries"]] == ["scripted-faithful", "scripted-starter"]


SLOW_AGENT = """import sys, time
from pathlib import Path
time.sleep(1.0)
site = Path(sys.argv[1]) / "site"
site.mkdir(exist_ok=True)
(site / "index.html").write_text("<p>slow agent</p>")
"""


def test_sigkill_mid_attempts_then_resume(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    (project / "entries/scripted/slow.py").write_text(SLOW_AGENT)
    entry = (project / "entries/scripted-starter.yaml").read_text()
    (project / "entries/scripted-slow.yaml").write_text(
        entry.replace("scripted-starter", "scripted-slow").replace("starter.py", "slow.py")
    )
    definition = yaml.safe_load((project / "releases/demo.yaml").read_text())
    definition["cases"] = ["html5-boilerplate"]  # resuming is what this test is about
    definition["entries"] = ["scripted-slow"]
    definition["protocol"]["repeats"] = 4
    (project / "releases/demo.yaml").write_text(yaml.safe_dump(definition))
    proc = subprocess.Popen(
        [sys.executable, "-m", "doit", "release:demo"],
        cwd=project,
        env=doit_env(project),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    finished: list[str] = []
    assert proc.stderr is not None
    deadline = time.monotonic() + 600
    for line in proc.stderr:
        if line.startswith("[recon] ran"):
            finished.append(line.split()[2])
        if sum(c.startswith("attempt:") for c in finished) == 2 or time.monotonic() > deadline:
            break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    attempts_done = [c for c in finished if c.startswith("attempt:")]
    assert len(attempts_done) == 2, finished
    resumed = doit(project, "release:demo")
    assert not set(finished) & set(resumed.ran), resumed.stderr
    assert len([c for c in resumed.ran if c.startswith("attempt:")]) == 2
    assert (project / "releases/demo/manifest.json").is_file()
    verify = recon(project, "store", "verify")
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "clean" in verify.stdout
