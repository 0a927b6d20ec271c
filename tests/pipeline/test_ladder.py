"""Issue 5's validity ladder and cheats, graded by a real doit build of each demo case.

Every variant of ``recon.curate.ladder`` becomes a native scripted entry that copies its
tree into the workspace's output; one release per demo case (repeats 1) runs them all
next to ``scripted-faithful``. The reference must score exactly 1.0 on every dimension;
the grade tables must order the ladder strictly, hit each defect's dimension, flag both
cheats as evidence used as imagery and give neither more than half the regional credit.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from recon.curate import ladder
from recon.model import Grading, load_yaml
from recon.model.grading import DIMENSIONS
from recon.render import open_browser
from tests.conftest import copy_project, doit, suite_cases
from tests.pipeline.scripted import copy_entry, grade_table, write_release

pytestmark = [pytest.mark.slow, pytest.mark.browser]

REPO = Path(__file__).resolve().parents[2]
# The html5-boilerplate page is one paragraph, which is also its only region: removing
# that section leaves the same empty page as `blank`, so its ladder skips `missing`.
SINGLE_SECTION = {"html5-boilerplate"}
# What each defect must cost (at least one of the dimensions, strictly below the step
# above it on the ladder).
TARGETS = {
    "recoloured": ("regional_visual",),
    "shifted": ("regional_visual", "global_visual"),
    "missing": ("functional", "regional_visual"),
    "blank": ("global_visual",),
}


def _steps(case: str) -> list[str]:
    return [s for s in ladder.LADDER if not (s == "missing" and case in SINGLE_SECTION)]


def _entry_id(case: str, variant: str) -> str:
    return f"ladder-{case}-{variant}"


def _write_entries(project: Path, case: str) -> list[str]:
    grading = load_yaml(Grading, project / "cases" / case / "sealed" / "grading.yaml")
    answer = project / "entries" / "scripted" / "answers" / case / "faithful"
    with open_browser() as browser:
        trees = ladder.build(project / "cases" / case, grading, browser, answer=answer).trees
    return [
        copy_entry(project, _entry_id(case, variant), tree)
        for variant, tree in trees.items()
        if variant in [*_steps(case), *ladder.CHEATS] and variant != "faithful"
    ]


def _table(case: str, grades: dict[str, dict[str, Any]]) -> str:
    dims = sorted({d for g in grades.values() for d in g.get("dimensions", {})})
    lines = [f"ladder of {case}", "  " + " ".join([f"{'variant':20}", f"{'total':>6}", *dims])]
    for name, g in grades.items():
        values = [f"{g.get('dimensions', {}).get(d, float('nan')):>{len(d)}.3f}" for d in dims]
        lines.append(
            "  " + " ".join([f"{name:20}", f"{g.get('total', float('nan')):6.3f}", *values])
        )
    return "\n".join(lines)


@pytest.mark.parametrize("case", suite_cases())
def test_ladder_orders_and_cheats_lose(case: str, tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    entries = ["scripted-faithful", *_write_entries(project, case)]
    release = write_release(project, f"ladder-{case}", case, entries)
    doit(project, "-n", "2", "-P", "thread", f"release:{release}")
    grades = {
        name: grade_table(
            project,
            release,
            "scripted-faithful" if name == "faithful" else _entry_id(case, name),
            case,
        )
        for name in [*_steps(case), *ladder.CHEATS]
    }
    report = _table(case, grades)
    print(report)
    total = {name: g["total"] for name, g in grades.items()}
    steps = _steps(case)
    assert grades["reference"]["dimensions"] == dict.fromkeys(DIMENSIONS, 1.0), report
    assert total["reference"] >= total["faithful"], report
    for upper, lower in pairwise(steps[1:]):
        assert total[upper] > total[lower], f"{upper} !> {lower} on the total\n{report}"
        dims_upper, dims_lower = grades[upper]["dimensions"], grades[lower]["dimensions"]
        hit = [d for d in TARGETS[lower] if dims_upper[d] > dims_lower[d]]
        assert hit, f"{lower} costs none of {TARGETS[lower]} against {upper}\n{report}"
    for cheat in ladder.CHEATS:
        g = grades[cheat]
        assert g["dimensions"]["policy"] < 1.0, f"{cheat} passes policy\n{report}"
        assert "evidence_as_imagery" in json.dumps(g["details"]["policy"]), report
        assert g["total"] < total["faithful"], f"{cheat} beats faithful\n{report}"
        assert g["dimensions"]["regional_visual"] <= 0.5, f"{cheat} regional\n{report}"
