"""`recon validate` renders each reference: unresolvable regions and assertions that fail on
the reference are caught there, with one line naming the file, the field and the fix."""

from __future__ import annotations

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
            'selector: \'p:has-text("Hello world!")\'',
            "selector: 'p:has-text(\"Goodbye\")'",
            "regions[0] (greeting): selector: 'p:has-text(\"Goodbye\")' matches nothing in the "
            "reference (desktop); fix the selector or give a box",
        ),
        (
            'value: "rgb(34, 34, 34)"',
            'value: "rgb(255, 0, 0)"',
            "assertions (greeting-colour): fails on the reference itself "
            "(observed: 'rgb(34, 34, 34)'); fix the locator or the expectation",
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
