"""`recon case new` and `recon validate ID…`: a scaffold validates; every problem of the
named cases is reported in one run, discrimination and preservation included."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import recon

REPO = Path(__file__).resolve().parents[2]
GRADING = "cases/my-page/sealed/grading.yaml"


def _project(tmp_path: Path, *cases: str) -> Path:
    project = tmp_path / "p"
    (project / "cases").mkdir(parents=True)
    shutil.copytree(REPO / "recon", project / "recon", ignore=shutil.ignore_patterns("__pycache__"))
    for case in cases:
        shutil.copytree(REPO / "cases" / case, project / "cases" / case)
    return project


def test_file_problems_of_several_cases_are_reported_in_one_run(tmp_path: Path) -> None:
    project = _project(tmp_path, "html5-boilerplate", "todomvc")
    grading = project / "cases" / "html5-boilerplate" / "sealed" / "grading.yaml"
    grading.write_text(grading.read_text().replace("weight: 0.5", "weight: 0.5\n    wieght: 1", 1))
    reference = project / "cases" / "todomvc" / "sealed" / "reference"
    (reference / "extra.txt").write_text("not pinned")
    (reference / "css" / "index.css").write_text("/* changed */")
    leak = project / "cases" / "todomvc" / "public" / "brief.md"
    leak.write_text(leak.read_text() + "\nSee ../sealed/grading.yaml.\n")
    done = recon(project, "validate", "--no-render", "html5-boilerplate", "todomvc")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert any("html5-boilerplate/sealed/grading.yaml: assertions[2].wieght" in x for x in lines)
    assert any(
        "todomvc/provenance.yaml: artifacts: sealed/reference/extra.txt is not pinned" in x
        for x in lines
    )
    assert any("artifacts[1].blake3: sealed/reference/css/index.css has blake3" in x for x in lines)
    assert any("todomvc/public/brief.md: mentions a sealed path" in x for x in lines)
    assert len(lines) == 4, done.stderr


def test_an_unknown_case_is_named(tmp_path: Path) -> None:
    done = recon(_project(tmp_path, "todomvc"), "validate", "--no-render", "nope")
    assert done.returncode == 2
    assert "cases/nope/case.yaml: no such case (known: todomvc)" in done.stderr


@pytest.mark.browser
def test_the_scaffold_validates_and_a_check_passing_on_the_starter_is_reported(
    tmp_path: Path,
) -> None:
    project = _project(tmp_path)
    made = recon(project, "case", "new", "my-page")
    assert made.returncode == 0, made.stderr
    assert recon(project, "validate", "my-page").returncode == 0

    # The discriminating heading check now passes on the starter; a preservation check
    # protects what the starter never had; the grading is copied into public/.
    starter = project / "cases" / "my-page" / "public" / "starter" / "site" / "index.html"
    starter.write_text(starter.read_text().replace("<main>\n", "<main>\n<h1>Replace me</h1>\n"))
    grading = project / GRADING
    grading.write_text(
        _protect_heading(grading.read_text()).replace(
            "  assertions:\n",
            "  assertions:\n    - id: footer-kept\n      locator: {role: contentinfo}\n"
            "      expect: visible\n",
        )
    )
    shutil.copy(grading, starter.parent / "notes.yaml")
    done = recon(project, "validate", "my-page")
    assert done.returncode == 2, done.stdout
    lines = done.stderr.splitlines()
    assert any(
        f"{GRADING}: assertions (heading-shown): marked `discriminates: true` but passes on "
        "the starter too" in x
        for x in lines
    ), done.stderr
    assert any(
        f"{GRADING}: preservation.assertions (footer-kept): fails on the starter already" in x
        for x in lines
    ), done.stderr
    assert any("public/starter/site/notes.yaml: is a copy of sealed" in x for x in lines)
    # the protected heading region is now on the starter as on the reference: not reported
    assert not any("preservation.regions" in x for x in lines), done.stderr
    # the reference itself fails the new preservation check too: reported as well
    assert any(
        "preservation.assertions (footer-kept) at desktop: fails on the reference" in x
        for x in lines
    )


def _protect_heading(grading: str) -> str:
    """The scaffold's grading with its heading region under preservation."""
    protected = grading.replace(
        "      expect: visible\npolicy: {}",
        "      expect: visible\n  regions: [heading]\npolicy: {}",
    )
    assert protected != grading
    return protected


@pytest.mark.browser
def test_a_protected_region_the_starter_lacks_is_reported(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert recon(project, "case", "new", "my-page").returncode == 0
    grading = project / GRADING
    grading.write_text(_protect_heading(grading.read_text()))
    done = recon(project, "validate", "my-page")
    assert done.returncode == 2, done.stdout
    lines = done.stderr.splitlines()
    problem = [x for x in lines if "preservation.regions" in x]
    assert len(problem) == 1, done.stderr
    assert (
        f"{GRADING}: preservation.regions (heading): fails on the starter already (regional 0."
        in problem[0]
    ), problem
    assert "< thresholds.region_pass 0.8)" in problem[0]
