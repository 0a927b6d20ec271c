"""A real agent's attempt, wall time split, against ``scripted-faithful-docker``'s.

Runs ``--runs`` attempts of each entry (interleaved) on one case with the real engine and
image, with ``tests/agents/test_real_agents_docker.py``'s own ``_attempt`` (the entry's
command and environment, the case's workspace and build step, the gateway plan), and splits
each:

- ``container``: staging, create and start (``run_docker``'s ``create`` + ``prepare``);
- ``to_first_call``: from the agent's start to its first model call reaching the gateway
  (the recording's first ``started_s``, counted from the gateway's start, which is the
  attempt's, less ``container``);
- ``calls``: from the first call's start to the last call's end;
- ``exit``: the rest of the agent step (after its last answer, until it exits);
- ``build`` and ``extract``: the contract's build step and taking the output out;
- ``teardown``: the rest of the attempt (container removal, the gateway's stop).

An entry without a gateway has only ``agent`` for the three middle columns.

    PYTHONPATH=. .venv/bin/python bench/agent_walltime.py [--runs 4] [--case html5-boilerplate] \
        [--entries ENTRY ...] [--out bench/results/agent_walltime.json]

A report, not a test: prints a table, writes JSON, asserts no times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from recon.project.loader import Project  # noqa: E402
from recon.project.settings import Settings  # noqa: E402
from recon.sandbox import ImageBuild, engine_client, ensure_image  # noqa: E402
from tests.agents.test_real_agents_docker import _attempt as attempt  # noqa: E402

ENTRIES = ("claude-code-scripted", "scripted-faithful-docker")
COLUMNS = ("container", "to_first_call", "calls", "exit", "agent", "build", "extract",
           "teardown", "wall")  # fmt: skip


def one(
    project: Project, entry_id: str, case: str, built: ImageBuild, work: Path
) -> dict[str, float]:
    started = time.monotonic()
    run = attempt(engine_client(), built, work, project.entries[entry_id], case)
    wall = time.monotonic() - started
    if run.outcome != "valid":
        raise SystemExit(f"{entry_id}: {run.outcome}: {run.reason}")
    t = run.timings
    split = {"container": t["create"] + t["prepare"], "agent": t["agent"],
             "build": t.get("build", 0.0), "extract": t.get("extract", 0.0)}  # fmt: skip
    calls = run.gateway.exchanges if run.gateway is not None else []
    if calls:
        first = calls[0].started_s
        last = max(e.started_s + e.total_ms / 1000 for e in calls)
        split["to_first_call"] = first - split["container"]
        split["calls"] = last - first
        split["exit"] = split["agent"] - split["to_first_call"] - split["calls"]
    split["teardown"] = wall - sum(split[k] for k in ("container", "agent", "build", "extract"))
    split["wall"] = wall
    return {k: round(v, 3) for k, v in split.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--case", default="html5-boilerplate")
    parser.add_argument("--entries", nargs="+", default=list(ENTRIES), metavar="ENTRY")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "agent_walltime.json")
    args = parser.parse_args()
    project = Project.open(HERE.parent, Settings.from_env())
    settings = Settings.from_env()
    deps = settings.deps_root(settings.store_root(HERE.parent))
    built = ensure_image(client=engine_client(), deps_root=deps, cache_dir=settings.apt_cache)
    runs: dict[str, list[dict[str, float]]] = {e: [] for e in args.entries}
    for _ in range(args.runs):
        for entry_id in args.entries:
            with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp:
                runs[entry_id].append(one(project, entry_id, args.case, built, Path(tmp)))
    medians: dict[str, dict[str, float]] = {}
    print(f"{'entry':26}" + "".join(f"{c:>14}" for c in COLUMNS))
    for entry_id, rows in runs.items():
        medians[entry_id] = {
            c: round(statistics.median(r[c] for r in rows), 3) for c in COLUMNS if c in rows[0]
        }
        cells = "".join(f"{medians[entry_id].get(c, float('nan')):>14.2f}" for c in COLUMNS)
        print(f"{entry_id:26}{cells}")
    result: dict[str, Any] = {
        "case": args.case,
        "runs": args.runs,
        "image": built.tag,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_1m": round(os.getloadavg()[0], 2),
        },
        "median_s": medians,
        "each_s": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
