"""Bad release inputs: one line naming the file or id and the fix, exit 2, no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import copy_project, doit_env, naming, recon


def _doit_list(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "doit", "list"],
        cwd=project,
        env=doit_env(project),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _one_line(proc: subprocess.CompletedProcess[str], *expected: str) -> str:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("bad") / "p")


def test_withdrawing_an_unknown_attempt(project: Path) -> None:
    proc = recon(project, "attempt", "withdraw", "demo-native.nobody.todomvc.0", "--reason", "x")
    _one_line(proc, "demo-native.nobody.todomvc.0: unknown attempt", "check the id")
    unbuilt = "demo-native.scripted-starter.todomvc.0"
    proc = recon(project, "attempt", "withdraw", unbuilt, "--reason", "x")
    _one_line(proc, f"{unbuilt}: no record yet", "doit release:<id>")
    proc = recon(project, "attempt", "restore", unbuilt, "--reason", "x")
    _one_line(proc, f"{unbuilt}: not withdrawn by hand from demo")
    proc = recon(project, "attempt", "withdraw", unbuilt, "--reason", "x", "--release", "nope")
    _one_line(proc, "--release nope: no such release")
    assert not (project / "releases/demo.withdrawals.json").exists()


def test_a_release_with_duplicate_case_ids(project: Path) -> None:
    definition = project / "releases/demo.yaml"
    text = definition.read_text()
    twice = text.replace("cases: [html5-boilerplate, todomvc]", "cases: [todomvc, todomvc]")
    assert twice != text
    definition.write_text(twice)
    try:
        expected = ("releases/demo.yaml", "cases: 'todomvc' is listed twice")
        _one_line(recon(project, "validate", "--no-render"), *expected)
        _one_line(_doit_list(project), *expected)
    finally:
        definition.write_text(text)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "malformed JSON: line 1"),
        ('{"schema_version": 1, "release": "demo"}', "field required"),
        ("[]", "demo.lock"),
    ],
)
def test_a_lock_file_that_does_not_parse(project: Path, content: str, expected: str) -> None:
    lock = project / "releases/demo.lock"
    lock.write_text(content)
    try:
        for proc in (_doit_list(project), recon(project, "release", "freeze", "demo")):
            _one_line(proc, "releases/demo.lock", expected, "recon release freeze demo")
    finally:
        lock.unlink()


def test_a_withdrawals_file_that_does_not_parse(project: Path) -> None:
    path = project / "releases/demo.withdrawals.json"
    path.write_text('{"schema_version": 1, "release": "demo", "active": [{"attempt": 3}]}')
    try:
        _one_line(_doit_list(project), "releases/demo.withdrawals.json", "active[0]")
    finally:
        path.unlink()


def test_freezing_an_unbuilt_release(project: Path) -> None:
    _one_line(recon(project, "release", "freeze", "demo"), "not built", "doit release:demo")
    _one_line(recon(project, "release", "freeze", "nope"), "releases/nope.yaml: no such release")


GARBAGE = bytes(range(256)) * 4


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
@pytest.mark.parametrize(
    ("name", "valid"),
    [
        ("demo.lock", '{"schema_version": 1, "release": "demo", "version": 1, "history": []}'),
        ("demo.withdrawals.json", '{"schema_version": 1, "release": "demo", "active": []}'),
    ],
)
def test_a_damaged_lock_or_withdrawals_file_is_refused_naming_it(
    project: Path, name: str, valid: str, damage: str
) -> None:
    """Truncated or garbage: the build refuses at setup (exit 2), it never guesses."""
    path = project / "releases" / name
    path.write_bytes(valid.encode()[: len(valid) // 2] if damage == "truncated" else GARBAGE)
    try:
        _one_line(_doit_list(project), f"releases/{name}")
    finally:
        path.unlink()


@pytest.mark.parametrize("damage", ["truncated", "garbage", "shape"])
def test_a_damaged_calibration_is_refused_naming_it(project: Path, damage: str) -> None:
    definition = project / "releases/demo.yaml"
    text = definition.read_text()
    folder = project / "releases/calibrations"
    folder.mkdir(exist_ok=True)
    path = folder / "cal.yaml"
    body = {"truncated": b"schema_version: 1\nid: cal\nweights: {global_visual: 0.",
            "garbage": GARBAGE, "shape": b"- one\n- two\n"}[damage]  # fmt: skip
    path.write_bytes(body)
    definition.write_text(naming(text, "cal"))
    try:
        _one_line(_doit_list(project), "releases/calibrations/cal.yaml")
    finally:
        definition.write_text(text)
        path.unlink()
