"""`recon case ladder`: issue 5's validity ladder and cheats, graded by a real doit build.

Run on html5-boilerplate, the cheapest demo case (what CI has time for: todomvc's ladder
took 2 to 4 minutes more; RECON_FULL_SUITE=1 runs every case; the whole suite is
`recon case ladder --all`, not CI). The command builds each variant as a
native scripted entry of a ladder release in the project's store; it exits 0 only when the
reference scores exactly 1.0 on every dimension, the ladder is strictly ordered with each
defect costing its dimension, and both cheats are flagged as evidence used as imagery with
at most half the regional credit (recon.curate.ladder_order). A second run reuses every
cell from the store.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FULL_SUITE, copy_project, doit_env, suite_cases

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def _ladder(project: Path, case: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recon", "--root", str(project), "case", "ladder", case],
        cwd=project,
        env=doit_env(project),
        capture_output=True,
        text=True,
        timeout=3600,
    )


def ladder_cases() -> list[str]:
    cases = suite_cases()
    return cases if os.environ.get(FULL_SUITE) == "1" else cases[:1]


@pytest.mark.parametrize("case", ladder_cases())
def test_ladder_orders_cheats_lose_and_a_rerun_reuses_every_cell(case: str, tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    done = _ladder(project, case)
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"ladder of {case}" in done.stdout
    for variant in ("reference", "faithful", "recoloured", "shifted", "blank", "image-only"):
        assert re.search(rf"^  {variant}\s+1?\d?\.\d{{3}}", done.stdout, re.MULTILINE), variant
    assert "1 of 1 ladder(s) ordered" in done.stdout
    again = _ladder(project, case)
    assert again.returncode == 0, again.stdout + again.stderr
    # nothing runs again: every cell is up to date for doit or reused from the store
    cached = re.search(r"cells: 0 ran, (\d+) reused from the store, (\d+) doit", again.stdout)
    assert cached and int(cached[1]) + int(cached[2]) > 0, again.stdout
