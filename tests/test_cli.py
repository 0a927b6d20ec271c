"""The recon command: help for every command, documented in the README, one-line errors,
deprecated spellings that say so, and small handlers."""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from recon.cli import main
from recon.commands.parser import build_parser
from tests.conftest import REPO, copy_project


def _commands(parser: argparse.ArgumentParser, prefix: str = "") -> list[tuple[str, str]]:
    """Every command the help lists, with its help text (a deprecated spelling is not
    listed)."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                if name in helps:
                    full = f"{prefix} {name}".strip()
                    found.append((full, helps[name]))
                    found.extend(_commands(sub, full))
    return found


def test_every_command_has_help_and_is_in_the_readme() -> None:
    readme = (REPO / "README.md").read_text()
    commands = _commands(build_parser())
    assert {"validate", "schema", "store verify", "store gc", "diff", "case evidence"} <= {
        c for c, _ in commands
    }
    for command, help_text in commands:
        assert help_text.strip(), f"recon {command} has no help text"
        assert f"recon {command}" in readme, f"README.md does not show `recon {command}`"


def test_the_help_lists_one_curator_group_and_one_validate_command() -> None:
    listed = [c for c, _ in _commands(build_parser())]
    assert "case" in listed and "curate" not in listed
    assert [c for c in listed if c.split()[-1] == "validate"] == ["validate"]
    assert not [c for c in listed if c.startswith("curate")]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (["curate", "evidence", "no-such-case"], "case evidence"),
        (["case", "validate", "--no-render", "no-such-case"], "validate"),
    ],
)
def test_a_deprecated_spelling_says_so_then_runs_the_new_command(
    old: list[str], new: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = copy_project(tmp_path / "p")
    current = [*new.split(), *old[2:]]
    assert main(["--root", str(project), *current]) == 2
    now = capsys.readouterr()
    assert main(["--root", str(project), *old]) == 2
    then = capsys.readouterr()
    warning = f"recon: `recon {' '.join(old[:2])}` is deprecated; use `recon {new}`\n"
    assert then.err == warning + now.err and then.out == now.out
    assert "no such case" in now.err and "deprecated" not in now.err


def test_every_function_of_the_command_line_is_under_40_lines() -> None:
    files = [*sorted((REPO / "recon" / "commands").glob("*.py")), REPO / "recon" / "cli.py"]
    long = [
        f"{path.name}:{node.lineno} {node.name}: {node.end_lineno - node.lineno + 1} lines"
        for path in files
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.end_lineno - node.lineno + 1 >= 40
    ]
    assert len(files) > 2 and long == []


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recon", "--root", str(root), *args],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=120,
    )


BAD_INPUTS = {
    "missing field": (
        "entries/scripted-starter.yaml",
        '  version: "1"\n',
        "",
        "agent.version: field required",
    ),
    "wrong type": ("entries/scripted-starter.yaml", "cpus: 1,", 'cpus: "lots",', "budget.cpus"),
    "unknown key": (
        "entries/scripted-starter.yaml",
        "tool_profile: none",
        "tool_profile: none\ntool_profil: none",
        "tool_profil: unknown key",
    ),
    "malformed yaml": (
        "releases/demo.yaml",
        "cases: [html5-boilerplate, todomvc]",
        "cases: [html5-boilerplate, todomvc",
        "malformed YAML: line",
    ),
    "unknown case id": (
        "releases/demo.yaml",
        "cases: [html5-boilerplate, todomvc]",
        "cases: [html5-boilerplate, no-such-case]",
        "cases[1]: unknown case 'no-such-case'",
    ),
}


@pytest.mark.parametrize("label", sorted(BAD_INPUTS))
def test_bad_input_is_one_clear_message_and_exit_2(label: str, tmp_path: Path) -> None:
    rel, old, new, expected = BAD_INPUTS[label]
    project = copy_project(tmp_path / "p")
    path = project / rel
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    for proc in (
        _run(project, "validate"),
        subprocess.run(
            [sys.executable, "-m", "doit", "list"],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=120,
        ),
    ):
        assert proc.returncode == 2, proc.stdout + proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1, proc.stderr
        assert rel in lines[0] and expected in lines[0], lines[0]
        assert "Traceback" not in proc.stderr


def test_valid_project_validates(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    proc = _run(project, "validate", "--no-render")  # the render checks: test_casecheck.py
    cases = len(list((project / "cases").glob("*/case.yaml")))
    assert proc.returncode == 0 and proc.stdout.startswith(f"ok: {cases} case(s)")


def test_usage_error_exits_2(tmp_path: Path) -> None:
    proc = _run(tmp_path, "no-such-command")
    assert proc.returncode == 2


def test_diff_of_missing_release_is_bad_input(tmp_path: Path) -> None:
    shutil.copytree(REPO / "releases", tmp_path / "releases", ignore=shutil.ignore_patterns("*/"))
    proc = _run(tmp_path, "diff", "nope", "nada")
    assert (
        proc.returncode == 2 and "manifest.json" in proc.stderr and "Traceback" not in proc.stderr
    )
