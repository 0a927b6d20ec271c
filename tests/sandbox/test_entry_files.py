"""An attempt sees only its own entry's declared files, copied read-only (no engine needed)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from recon.errors import ConfigError
from recon.project.settings import Settings
from recon.sandbox.entry_files import copy_agent_files

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def entries(tmp_path: Path) -> Path:
    root = tmp_path / "entries"
    (root / "scripted" / "answers" / "case-a").mkdir(parents=True)
    (root / "scripted" / "agent.py").write_text("print('turns: 1')\n")
    (root / "scripted" / "run.sh").write_text("#!/bin/sh\n")
    (root / "scripted" / "run.sh").chmod(0o755)
    (root / "scripted" / "answers" / "case-a" / "index.html").write_text("<h1>answer</h1>\n")
    (root / "other.yaml").write_text("id: other\n")
    return root


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_only_the_declared_files_are_copied_read_only(entries: Path, tmp_path: Path) -> None:
    dest = copy_agent_files(entries, "e", ["scripted/agent.py", "scripted/run.sh"], tmp_path / "c")
    assert _tree(dest) == ["scripted", "scripted/agent.py", "scripted/run.sh"]
    assert (dest / "scripted/agent.py").read_text() == "print('turns: 1')\n"
    assert stat.S_IMODE((dest / "scripted/agent.py").stat().st_mode) == 0o444
    assert stat.S_IMODE((dest / "scripted/run.sh").stat().st_mode) == 0o555  # keeps its x bit
    assert stat.S_IMODE((dest / "scripted").stat().st_mode) == 0o555
    assert stat.S_IMODE(dest.stat().st_mode) == 0o555
    assert not (dest / "scripted/answers").exists() and not (dest / "other.yaml").exists()


def test_no_declared_files_gives_an_empty_folder(entries: Path, tmp_path: Path) -> None:
    assert _tree(copy_agent_files(entries, "e", [], tmp_path / "c")) == []


def test_the_copy_is_a_copy(entries: Path, tmp_path: Path) -> None:
    """A link in the copy would let a later change to entries/ (or the agent) reach through."""
    dest = copy_agent_files(entries, "e", ["scripted/agent.py"], tmp_path / "c")
    copied = dest / "scripted/agent.py"
    assert not copied.is_symlink()
    assert copied.stat().st_ino != (entries / "scripted/agent.py").stat().st_ino


@pytest.mark.parametrize(
    ("rel", "why"),
    [
        ("/etc/passwd", "not a relative path"),
        ("../cases/c/sealed/grading.yaml", "not a normalised path"),
        ("scripted/../../secret", "not a normalised path"),
        ("./scripted/agent.py", "not a normalised path"),
        ("scripted//agent.py", "not a normalised path"),
        ("", "not a relative path"),
        ("scripted/missing.py", "not a file under entries/"),
        ("scripted", "not a file under entries/"),
        ("link-out", "leads outside entries/ through a link"),
    ],
)
def test_bad_paths_are_refused_naming_the_entry_and_field(
    entries: Path, tmp_path: Path, rel: str, why: str
) -> None:
    (tmp_path / "secret").write_text("sealed\n")
    os.symlink(tmp_path / "secret", entries / "link-out")
    with pytest.raises(ConfigError) as err:
        copy_agent_files(entries, "e", ["scripted/agent.py", rel], tmp_path / "c")
    assert str(err.value).startswith(f"entries/e.yaml: agent.files[1]: {rel!r}")
    assert why in str(err.value)
    assert not (tmp_path / "c").exists()  # nothing copied when one path is bad


def test_a_link_inside_entries_is_copied_as_its_target(entries: Path, tmp_path: Path) -> None:
    os.symlink("agent.py", entries / "scripted" / "alias.py")
    dest = copy_agent_files(entries, "e", ["scripted/alias.py"], tmp_path / "c")
    assert (dest / "scripted/alias.py").read_text() == "print('turns: 1')\n"
    assert not (dest / "scripted/alias.py").is_symlink()


def test_every_shipped_entry_copies_cleanly(tmp_path: Path) -> None:
    """The repository's own entries: faithful gets its answers, nobody else does."""
    from recon.project.loader import Project

    project = Project.open(REPO, Settings.from_env())
    for entry in project.entries.values():
        dest = copy_agent_files(
            project.entries_dir, entry.id, entry.agent.files, tmp_path / entry.id
        )
        assert _tree(dest) == sorted(
            {str(Path(f)) for f in entry.agent.files}
            | {str(p) for f in entry.agent.files for p in Path(f).parents if str(p) != "."}
        )
        has_answers = any("answers" in f for f in entry.agent.files)
        assert (dest / "scripted" / "answers").exists() == has_answers
