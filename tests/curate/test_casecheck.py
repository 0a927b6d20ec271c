"""`recon validate` renders each reference, the fixed point of its grade: unresolvable
regions, assertions that fail on the reference at any viewport, ambiguous locators and
failing workflows are caught there, each deviation on its own line naming the file, the
field, the observed value and the fix (with discrimination on the starter in the same run:
`tests/curate/test_case_validate.py`)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import copy_project

GRADING = "cases/html5-boilerplate/sealed/grading.yaml"


def validate(project: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recon", "validate", *extra],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = copy_project(tmp_path / "p")
    for case in (root / "cases").iterdir():  # one case keeps each render short
        if case.name != "html5-boilerplate":
            shutil.rmtree(case)
    for release in (root / "releases").glob("*.yaml"):  # the suite names the removed cases
        if release.name != "demo.yaml":
            release.unlink()
    demo = root / "releases" / "demo.yaml"
    lines = demo.read_text().splitlines()
    demo.write_text(
        "\n".join("cases: [html5-boilerplate]" if x.startswith("cases:") else x for x in lines)
    )
    return root


@pytest.mark.browser
def test_the_real_case_validates_against_its_rendered_reference(project: Path) -> None:
    proc = validate(project)
    assert proc.returncode == 0, proc.stderr
    assert "checked on each rendered reference" in proc.stdout


@pytest.mark.browser
@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "selector: 'p:has-text(\"Hello world!\")'",
            "selector: 'p:has-text(\"Goodbye\")'",
            "regions[0] (greeting): selector: 'p:has-text(\"Goodbye\")' matches nothing in the "
            "reference (desktop); fix the selector or give a box",
        ),
        (
            'value: "rgb(34, 34, 34)"',
            'value: "rgb(255, 0, 0)"',
            "assertions (greeting-colour) at desktop, mobile, tablet: fails on the reference "
            "itself (observed: 'rgb(34, 34, 34)'); fix the locator or the expectation",
        ),
    ],
)
def test_sealed_problems_are_caught_at_validation(
    project: Path, old: str, new: str, expected: str
) -> None:
    path = project / GRADING
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    proc = validate(project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip() == f"recon: {GRADING}: {expected}"
    assert validate(project, "--no-render").returncode == 0  # only the render finds it


def edit(project: Path, *changes: tuple[str, str]) -> None:
    path = project / GRADING
    text = path.read_text()
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new, 1)
    path.write_text(text)


@pytest.mark.browser
def test_every_deviation_is_reported_on_its_own_line(project: Path) -> None:
    edit(
        project,
        ("selector: 'p:has-text(\"Hello world!\")'", "selector: 'p:has-text(\"Goodbye\")'"),
        ('value: "rgb(34, 34, 34)"', 'value: "rgb(255, 0, 0)"'),
        ("expect: hidden", "expect: visible"),
    )
    proc = validate(project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 4, proc.stderr
    assert all(line.startswith(f"recon: {GRADING}: ") for line in lines)
    assert "regions[0] (greeting)" in lines[0]
    assert "assertions (greeting-colour) at desktop, mobile, tablet" in lines[1]
    assert "assertions (no-heading) at desktop, mobile, tablet" in lines[2]
    assert "(observed: 'no matching element')" in lines[2]
    # `expect: visible` holds on the starter too: the discrimination check, in the same run
    assert "assertions (no-heading): marked `discriminates: true` but passes" in lines[3]


@pytest.mark.browser
def test_an_ambiguous_locator_is_an_error_naming_its_matches(project: Path) -> None:
    edit(
        project,
        (
            'locator: {css: "body > p"}\n    expect: css',
            'locator: {css: "body > *"}\n    expect: css',
        ),
    )
    proc = validate(project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert re.fullmatch(
        f"recon: {GRADING}: assertions \\(greeting-colour\\): the locator matches 2 elements "
        'on the reference at desktop \\(<p> "Hello world! This is HTML5 Boilerplate." at '
        "\\d+,\\d+ \\d+x\\d+; <script> at 0,0 0x0\\); give `match: first\\|any\\|all\\|nth=N` "
        "or make the locator unique",
        proc.stderr.strip(),
    ), proc.stderr
    edit(project, ("name: color\n", "name: color\n    match: first\n"))
    assert validate(project).returncode == 0  # it says which match it means
