"""An entry's ``agent.files`` may name folders and globs: the project expands them to every
file, the entry digest covers each one, and a pattern naming nothing is one clear error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from recon.model.entry import Agent
from recon.pipeline.graph import Graph
from recon.pipeline.runtime import Runtime
from recon.project.loader import Project
from recon.project.settings import Settings
from tests.conftest import copy_project, doit_env

REPO = Path(__file__).resolve().parents[2]
ANSWERS = REPO / "entries" / "scripted" / "answers"


def _answer_files(kind: str) -> list[str]:
    found = [p for p in ANSWERS.rglob("*") if p.is_file()]
    wanted = [
        p for p in found if p.name == "brief-title.txt" or p.relative_to(ANSWERS).parts[1] == kind
    ]
    return sorted(p.relative_to(REPO / "entries").as_posix() for p in wanted)


def test_scripted_entries_declare_every_answer_file_of_their_kind() -> None:
    entries = Project.open(REPO, Settings.from_env()).entries
    for kind in ("faithful", "flawed"):
        files = entries[f"scripted-{kind}"].agent.files
        assert files == sorted(["scripted/answer.py", *_answer_files(kind)])
        other = "flawed" if kind == "faithful" else "faithful"
        assert not [f for f in files if f"/{other}/" in f]


def test_every_case_has_a_faithful_and_a_flawed_answer() -> None:
    cases = sorted(p.parent.name for p in (REPO / "cases").glob("*/case.yaml"))
    for case in cases:
        folder = ANSWERS / case
        title = (REPO / "cases" / case / "public" / "brief.md").read_text().splitlines()[0]
        assert (folder / "brief-title.txt").read_text().strip() == title.strip(), case
        assert any((folder / "faithful").rglob("*.html")), case
        assert any((folder / "flawed").rglob("*")), case


def test_changing_one_answer_file_changes_that_entry_digest_only(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")

    def digests() -> dict[str, str]:
        opened = Project.open(project, Settings.from_env())
        rt = Runtime(opened)
        graph = Graph(opened, rt.stat, rt.codes)
        return {e: graph.entry_digest(e) for e in ("scripted-faithful", "scripted-flawed")}

    before = digests()
    page = project / "entries" / "scripted" / "answers" / "todomvc" / "flawed" / "app.css"
    page.write_text(page.read_text() + "\n/* one more line */\n")
    after = digests()
    assert after["scripted-flawed"] != before["scripted-flawed"]
    assert after["scripted-faithful"] == before["scripted-faithful"]


def test_a_pattern_naming_no_file_is_one_clear_error(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    entry = project / "entries" / "scripted-flawed.yaml"
    entry.write_text(entry.read_text().replace("*/flawed/", "*/missing/"))
    proc = subprocess.run(
        [sys.executable, "-m", "recon", "validate", "--no-render"],
        cwd=project,
        env=doit_env(project),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        "recon: entries/scripted-flawed.yaml: agent.files[2]: 'scripted/answers/*/missing/' "
        "names no file under entries/; fix the path or add the file"
    )


@pytest.mark.parametrize("bad", ["/etc/passwd", "../cases/x", "a//b", "", "*/../x/", "a b/*"])
def test_files_stay_under_entries(bad: str) -> None:
    with pytest.raises(ValidationError, match=r"files\.0\n.*(path|folder)"):
        Agent(name="a", version="1", command=["x"], files=[bad])


@pytest.mark.parametrize("good", ["scripted/answer.py", "scripted/answers/*/faithful/", "a/?.txt"])
def test_globs_and_folders_are_accepted(good: str) -> None:
    assert Agent(name="a", version="1", command=["x"], files=[good]).files == [good]
