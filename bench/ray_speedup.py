"""Parallel speed-up on sleep-bound cells: doit ``-n K -P thread`` with the cells in-process
against the same cells submitted as Ray tasks to a local Ray cluster, in one run.

A temp project holds a dodo of ``--cells`` independent tasks whose work is a sleep of
``--sleep`` seconds (a stand-in for an attempt waiting on its agent): in-process
(``time.sleep``) or on the cluster (a Ray task that sleeps, submitted and waited for from
the doit thread, as :class:`recon.pipeline.raycluster.RayExecutor` does). The cluster is
the tests' (``tests/pipeline/raycluster.py``: one node on 127.0.0.1 with ``--workers``
worker processes). Each build is a fresh ``python -m doit -a`` subprocess; reported:
wall time (for Ray less the coordinator's one-off ``ray.init``) and speed-up against
``-n 1`` in-process.

    .venv/bin/python bench/ray_speedup.py [--cells 16] [--sleep 2] [--workers 8]
        [--out bench/results/ray_speedup.json]

A report, not a test: it prints a table and writes JSON; it asserts no times.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))

from tests.pipeline.raycluster import ray_cluster  # noqa: E402

DODO = """
import os, time
CELLS, SLEEP = int(os.environ["SPEEDUP_CELLS"]), float(os.environ["SPEEDUP_SLEEP"])
ADDRESS = os.environ.get("SPEEDUP_RAY")
if ADDRESS:
    import ray
    began = time.perf_counter()
    ray.init(address=ADDRESS, _node_ip_address="127.0.0.1", log_to_driver=False)
    # a builtin (time.sleep) cannot be a Ray task
    nap = ray.remote(num_cpus=1, max_retries=0)(lambda seconds: time.sleep(seconds))
    with open("ray_init_s", "w") as out:
        out.write(str(time.perf_counter() - began))

def work():
    if ADDRESS:
        ray.get(nap.remote(SLEEP))
    else:
        time.sleep(SLEEP)

def task_cell():
    for i in range(CELLS):
        yield {"name": str(i), "actions": [work], "uptodate": [False]}
"""


def build(folder: Path, jobs: int, cells: int, sleep: float, env: dict[str, str]) -> float:
    """The wall time of one build, less the driver's ``ray.init`` when it joined a cluster
    (a one-off per coordinator, not per cell)."""
    (folder / "ray_init_s").unlink(missing_ok=True)
    argv = [sys.executable, "-m", "doit", "-n", str(jobs), "-P", "thread", "-a"]
    full = {**os.environ, **env, "SPEEDUP_CELLS": str(cells), "SPEEDUP_SLEEP": str(sleep)}
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=folder, env=full, capture_output=True, text=True)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)
    joined = folder / "ray_init_s"
    return round(took - (float(joined.read_text()) if joined.exists() else 0.0), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cells", type=int, default=16)
    parser.add_argument("--sleep", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "ray_speedup.json")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="recon-speedup-") as tmp:
        folder = Path(tmp)
        (folder / "dodo.py").write_text(DODO)
        for jobs in (1, 2, 4, 8):
            rows.append({"way": "local", "n": jobs,
                         "seconds": build(folder, jobs, args.cells, args.sleep, {})})  # fmt: skip
        with ray_cluster(cpus=args.workers) as cluster:
            env = {**cluster.env, "SPEEDUP_RAY": cluster.address}
            build(folder, args.workers, args.cells, args.sleep, env)  # start the workers once
            for jobs in (1, 2, 4, 8):
                took = build(folder, jobs, args.cells, args.sleep, env)
                rows.append({"way": "ray", "n": jobs, "seconds": took})
    base = rows[0]["seconds"]
    floor = args.cells * args.sleep
    print(f"{args.cells} cells sleeping {args.sleep:g} s each ({floor:g} s of sleep in all); "
          f"Ray: one local node, {args.workers} worker processes")  # fmt: skip
    print(f"{'way':<7}{'-n':>4}{'wall s':>9}{'speed-up':>10}{'ideal':>7}")
    for row in rows:
        row["speedup"] = round(base / row["seconds"], 2)
        ideal = min(row["n"], args.cells)
        print(f"{row['way']:<7}{row['n']:>4}{row['seconds']:>9.2f}{row['speedup']:>9.2f}x"
              f"{ideal:>6}x")  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    params = {"cells": args.cells, "sleep": args.sleep, "workers": args.workers}
    args.out.write_text(json.dumps({"params": params, "rows": rows}, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
