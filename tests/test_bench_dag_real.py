"""``bench/dag_real.py`` measures what it says: its two columns do the same work on the
same built store, and differ only in recon's fast paths (times are never asserted)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, Build, bench_module, clone_built


def ran_kinds(run: dict[str, Any]) -> set[str]:
    return {key.split(":")[1] for key in run["cells"] if key.startswith("ran:")}


@pytest.mark.slow
@pytest.mark.browser
def test_the_stock_column_does_the_same_work_without_the_fast_paths(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    dag_real = bench_module("dag_real")
    base = clone_built(built_demo[0], tmp_path / "base")
    shutil.copy2(REPO / "bench" / "dag_real_dodo.py", base / "bench_dodo.py")
    roots = {c: dag_real.column_copy(base, tmp_path / c) for c in dag_real.COLUMNS}
    bench = dag_real.Bench(roots, "demo", [])
    for step, mutate in (("adopt", None), ("noop_first", None), ("noop", None),
                         ("regrade", "grader")):  # fmt: skip
        bench.step(step, mutate=mutate)
    runs = {(r["step"], r["column"]): r for r in bench.runs}
    for step in ("adopt", "noop_first", "noop", "regrade"):
        stock, recon = runs[step, "stock"], runs[step, "recon"]
        assert stock["cells"] == recon["cells"] and stock["executed"] == recon["executed"], step
    adopt = runs["adopt", "stock"]
    tasks = adopt["executed"]  # the copies have no doit state: every task runs ...
    assert tasks > 70 and ran_kinds(adopt) == set()  # ... and every cell is reused
    assert adopt["md5"] > 0 and runs["adopt", "recon"]["md5"] == 0
    assert runs["noop", "stock"]["uptodate"] == tasks  # doit checks every task
    assert runs["noop", "recon"]["uptodate"] == 1  # the stamp holds: only release:demo
    assert ran_kinds(runs["regrade", "recon"]) == {"grade", "aggregate", "site", "manifest"}
