"""What a lost Ray node costs a build: the same cold build on a two-node cluster with no
node lost, with the node running the attempt's capture lost, and with the node running the
attempt lost, in one run.

The cluster is the node-loss tests' (``tests/pipeline/netcluster.py``): a network namespace
of its own, a head with no CPUs, two worker nodes of 1 CPU and one ``browser`` each; a node
is lost by SIGKILL to its raylet's pid and a fresh node joins before the next build. Each
build is a fresh project (an empty store) of one release of one case and one slow native
attempt (the tests' ``slow_release``: its agent sleeps 6 s), run as ``doit -n 2 -P thread
release:slow executor=ray`` inside the namespace. Reported per build: wall time, the time
from the kill to recon's ``[recon] lost`` line, the time added against the build with no
loss, and whether ``release.json`` and ``manifest.json`` are byte-identical to it (a lost
attempt is retried: its release.json then differs in the slot's tries and reliability
counts, never in a score, which is checked instead).

    .venv/bin/python bench/ray_nodeloss.py [--out bench/results/ray_nodeloss.json]

A report, not a test: it prints a table and writes JSON; it asserts no times. Run as root
(``ip netns``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))

from tests.conftest import copy_project  # noqa: E402
from tests.pipeline.netcluster import (  # noqa: E402
    NetCluster,
    Running,
    kill_running,
    net_cluster,
    netns_unavailable,
)
from tests.pipeline.test_ray import slow_release  # noqa: E402

WAYS = ("none", "capture", "attempt")


def build(cluster: NetCluster, folder: Path, lose: str) -> dict[str, Any]:
    """One cold build; ``lose``: the kind of the slot's cell whose node is lost, or none."""
    cluster.keep(browsers=2)
    project = copy_project(folder / lose)
    slot = slow_release(project)
    run = Running(cluster, project, "release:slow")
    killed = None
    if lose != "none":
        killed = kill_running(cluster, run, f"{lose}:{slot}").killed
    done = run.end()
    if done.code != 0:
        raise SystemExit(f"the build losing {lose} failed ({done.code}):\n{done.stderr}")
    said = [t for t, line in run.said if line.startswith("[recon] lost")]
    release = project / "releases/slow"
    return {
        "lost": lose,
        "seconds": round(run.took, 2),
        "kill_to_lost_line_s": round(said[0] - killed, 2) if killed and said else None,
        "lost_lines": len(said),
        "release": (release / "release.json").read_bytes(),
        "manifest": (release / "manifest.json").read_bytes(),
    }


def scores(release: bytes) -> Any:
    """release.json less what a retry changes (the slot's tries, records, reliability)."""
    found = json.loads(release)
    found.pop("reliability")
    for attempt in found["attempts"]:
        for key in ("record", "retry_of", "tries"):
            attempt.pop(key)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=BENCH / "results/ray_nodeloss.json")
    args = parser.parse_args()
    why = netns_unavailable()
    if why is not None:
        raise SystemExit(f"bench/ray_nodeloss.py needs `ip netns` (run as root): {why}")
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="nodeloss-") as tmp, net_cluster() as cluster:
        runs = [build(cluster, Path(tmp), lose) for lose in WAYS]
    base = runs[0]
    rows = []
    for run in runs:
        rows.append({
            "lost": run["lost"],
            "seconds": run["seconds"],
            "added_s": round(run["seconds"] - base["seconds"], 2),
            "kill_to_lost_line_s": run["kill_to_lost_line_s"],
            "lost_lines": run["lost_lines"],
            "release_json_identical": run["release"] == base["release"],
            "manifest_identical": run["manifest"] == base["manifest"],
            "scores_identical": scores(run["release"]) == scores(base["release"]),
        })  # fmt: skip
    print(f"{'lost':8} {'seconds':>8} {'added':>7} {'kill→line':>10}  release  manifest  scores")
    for r in rows:
        line = "-" if r["kill_to_lost_line_s"] is None else f"{r['kill_to_lost_line_s']:.2f}"
        print(f"{r['lost']:8} {r['seconds']:8.2f} {r['added_s']:+7.2f} {line:>10}  "
              f"{r['release_json_identical']!s:7}  {r['manifest_identical']!s:8}  "
              f"{r['scores_identical']}")  # fmt: skip
    params = {"nodes": 2, "cpus_per_node": 1, "release": "slow (1 case, 1 attempt)",
              "load_1min_at_start": round(load, 2)}  # fmt: skip
    result = {"params": params, "rows": rows}
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
