"""The reference is the fixed point of its grade: submitted as an attempt and graded by a
real doit build, every case's sealed reference scores exactly 1.0 on all seven
dimensions, at every matrix point."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.curate.ladder import read_tree
from recon.model.grading import DIMENSIONS
from tests.conftest import copy_project, doit, suite_cases
from tests.pipeline.scripted import copy_entry, grade_table, write_release

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CASES = suite_cases()  # RECON_FULL_SUITE=1: every case under cases/


@pytest.mark.parametrize("case", CASES)
def test_the_reference_graded_against_itself_scores_exactly_one(case: str, tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    reference = read_tree(project / "cases" / case / "sealed" / "reference")
    entry = copy_entry(project, f"reference-{case}", reference)
    release = write_release(project, f"fixed-{case}", case, [entry])
    doit(project, "-n", "2", "-P", "thread", f"release:{release}")
    table = grade_table(project, release, entry, case)
    assert table["dimensions"] == dict.fromkeys(DIMENSIONS, 1.0), table["dimensions"]
    assert table["total"] == 1.0
    points = table["details"]["global_visual"]
    assert points and all(row["score"] == 1.0 for row in points), points  # every matrix point
    assert table["captures"] == {} and table["probe_failures"] == {}
