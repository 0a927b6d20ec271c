"""What a build pays before its first cell: deriving every task of this repository's
releases (``Pipeline.open``: the project, the code graph's per-kind code digests, every cell
of every release), in fresh subprocesses, interleaved:

- ``cold``: no code-graph cache (``store/state/codegraph.json`` absent): every module of
  ``recon`` parsed, as the first build in a store does;
- ``warm``: the cache as the previous process left it (only edited modules are parsed).

Each run also counts the cells and keeps the digest of the whole derivation (every cell's
kind, parameters, dependencies and files), so the two columns are shown to derive the same
graph. A run is a child process (``python -c``): its time includes imports.

    .venv/bin/python bench/derive.py [--runs 5] [--out bench/results/derive.json]

This is a report, not a test: it prints a table and writes JSON; it asserts no times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import hashlib, json, sys, time
from pathlib import Path
started = time.perf_counter()
from recon.pipeline.tasks import Pipeline
from recon.project import Project
from recon.project.settings import Settings
imported = time.perf_counter()
p = Pipeline.open(Project.open(Path(sys.argv[1]), Settings.from_env()), {})
done = time.perf_counter()
graph = {cid: [c.kind, c.params, {k: d.id for k, d in c.deps.items()}, p.graph.files[cid]]
         for cid, c in p.graph.cells.items()}
digest = hashlib.sha256(json.dumps(graph, sort_keys=True, default=str).encode()).hexdigest()
print(json.dumps({"import_s": imported - started, "open_s": done - imported,
                  "cells": len(graph), "graph": digest}))
"""


def run(project: Path) -> dict[str, float | int | str]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(project)],
        capture_output=True, text=True, check=False, cwd=project,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"derive failed in {project}:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "derive.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="recon-derive-") as tmp:
        project = Path(tmp) / "project"
        top = {".git", ".venv", "store"}  # the copy's own store starts empty

        def skipped(folder: str, names: list[str]) -> list[str]:
            return [n for n in names if n == "__pycache__" or (Path(folder) == REPO and n in top)]

        shutil.copytree(REPO, project, ignore=skipped)
        cache = project / "store" / "state" / "codegraph.json"
        runs: dict[str, list[dict[str, float | int | str]]] = {"cold": [], "warm": []}
        run(project)  # leaves the cache for the first warm run
        for _ in range(args.runs):
            runs["warm"].append(run(project))
            cache.unlink()
            runs["cold"].append(run(project))
    graphs = {r["graph"] for rs in runs.values() for r in rs}
    rows = {
        name: {
            "open_s_median": statistics.median(float(r["open_s"]) for r in rs),
            "import_s_median": statistics.median(float(r["import_s"]) for r in rs),
            "cells": rs[0]["cells"],
        }
        for name, rs in runs.items()
    }
    ratio = float(rows["warm"]["open_s_median"]) / float(rows["cold"]["open_s_median"])
    print(f"{'':6} {'open (median)':>14} {'import':>8} {'cells':>6}")
    for name, row in rows.items():
        print(f"{name:6} {row['open_s_median']:>13.2f}s {row['import_s_median']:>7.2f}s "
              f"{row['cells']:>6}")  # fmt: skip
    print(f"warm / cold: {ratio:.2f}; the same graph in every run: {len(graphs) == 1}")
    result = {
        "runs": args.runs,
        "rows": rows,
        "warm_over_cold": ratio,
        "same_graph": len(graphs) == 1,
        "load": os.getloadavg(),
        "python": platform.python_version(),
        "raw": runs,
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0 if len(graphs) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
