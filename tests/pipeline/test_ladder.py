"""Issue 5's validity ladder and cheats, graded by a real doit build of each demo case.

Every variant of ``tests/ladder.py`` becomes a native scripted entry that copies its tree
into the workspace's output; one release per demo case (repeats 1) runs them all next to
``scripted-faithful``. The grade tables must order the ladder strictly, hit each defect's
dimension, and flag both cheats as evidence used as imagery.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
import yaml

from recon.model import Grading, ReleaseDef, load_yaml
from recon.store import Store
from tests import ladder
from tests.conftest import copy_project, doit

pytestmark = [pytest.mark.slow, pytest.mark.browser]

REPO = Path(__file__).resolve().parents[2]
DEMO = load_yaml(ReleaseDef, REPO / "releases" / "demo.yaml")
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
COPY_AGENT = """import shutil, sys
from pathlib import Path
shutil.copytree(Path(sys.argv[1]), Path(sys.argv[2]) / "site", dirs_exist_ok=True)
print("turns: 1")
print("tool_calls: 1")
"""


def _steps(case: str) -> list[str]:
    return [s for s in ladder.LADDER if not (s == "missing" and case in SINGLE_SECTION)]


def _entry_id(case: str, variant: str) -> str:
    return f"ladder-{case}-{variant}"


def _write_entries(project: Path, case: str) -> list[str]:
    grading = load_yaml(Grading, project / "cases" / case / "sealed" / "grading.yaml")
    trees = ladder.variants(project / "cases" / case, grading)
    template = yaml.safe_load((project / "entries" / "scripted-starter.yaml").read_text())
    (project / "entries" / "scripted" / "ladder_copy.py").write_text(COPY_AGENT)
    ids = []
    for variant, tree in trees.items():
        if variant == "faithful" or (variant not in _steps(case) and variant in ladder.LADDER):
            continue
        rel = Path("scripted") / "ladder" / case / variant
        for path, data in tree.items():
            dest = project / "entries" / rel / path
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
        entry = dict(template, id=_entry_id(case, variant))
        entry["model"] = dict(template["model"], name=entry["id"])
        entry["agent"] = dict(
            template["agent"],
            command=[
                "{python}",
                "{entry_dir}/scripted/ladder_copy.py",
                f"{{entry_dir}}/{rel}",
                "{workspace}",
            ],
            files=["scripted/ladder_copy.py", *sorted(f"{rel}/{p}" for p in tree)],
        )
        (project / "entries" / f"{entry['id']}.yaml").write_text(yaml.safe_dump(entry))
        ids.append(entry["id"])
    return ids


def _write_release(project: Path, case: str, entries: list[str]) -> str:
    release = yaml.safe_load((project / "releases" / "demo.yaml").read_text())
    release.update(id=f"ladder-{case}", cases=[case], entries=["scripted-faithful", *entries])
    release["protocol"] = dict(release["protocol"], name=f"ladder-{case}", repeats=1)
    (project / "releases" / f"ladder-{case}.yaml").write_text(yaml.safe_dump(release))
    return str(release["id"])


def _grade(project: Path, protocol: str, entry: str, case: str) -> dict[str, Any]:
    pointer = project / "store" / "cells" / "grade" / f"{protocol}.{entry}.{case}.0.json"
    outputs = json.loads(pointer.read_text())["outputs"]
    table: dict[str, Any] = Store(project / "store").read_json(outputs["grade"]["digest"])
    return table


def _table(case: str, grades: dict[str, dict[str, Any]]) -> str:
    dims = sorted({d for g in grades.values() for d in g.get("dimensions", {})})
    lines = [f"ladder of {case}", "  " + " ".join([f"{'variant':20}", f"{'total':>6}", *dims])]
    for name, g in grades.items():
        values = [f"{g.get('dimensions', {}).get(d, float('nan')):>{len(d)}.3f}" for d in dims]
        lines.append(
            "  " + " ".join([f"{name:20}", f"{g.get('total', float('nan')):6.3f}", *values])
        )
    return "\n".join(lines)


@pytest.mark.parametrize("case", DEMO.cases)
def test_ladder_orders_and_cheats_lose(case: str, tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    release = _write_release(project, case, _write_entries(project, case))
    doit(project, "-n", "2", "-P", "thread", f"release:{release}")
    grades = {
        name: _grade(
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
