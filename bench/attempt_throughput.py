"""Attempt throughput: ``doit -n 2 -P thread`` against ``-n 1`` on a formal release.

A copy of the project holds one formal release (protocol ``throughput-docker``): the demo
case and the ``scripted-starter`` entry switched to the docker backend (its agent starts
python, prints two trace lines and submits the starter unchanged: a no-op-ish attempt),
``--attempts`` repeats. Its evidence, workspace and image cells are built once in that
base copy. Then, ``--rounds`` times, each column (order alternating round by round) gets a
fresh clone of the base and runs ``python -m doit [-n 2 -P thread] attempt``: every attempt
cell, nothing downstream (no browser). For each build: the wall time of the doit process,
its CPU time (user + sys, ``RUSAGE_CHILDREN``; the engine's own CPU is not included), the
attempts it ran (all must be ``valid``) and their per-cell times from the ``[recon] ran``
lines; then a no-op ``doit attempt`` in the same clone (nothing runs) gives the fixed cost
of starting doit and loading the tasks, subtracted for the ``net`` figures.

    .venv/bin/python bench/attempt_throughput.py [--attempts 8] [--rounds 3] \
        [--source .] [--out bench/results/attempt_throughput.json]

``--source`` is the project the copy is made from (default: this repository's working tree).
A report, not a test: it prints a table and writes JSON; it asserts no times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from recon.project.settings import Settings
from recon.sandbox import default_recipe, engine_client, ensure_engine, find_image

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RELEASE = "throughput"
ENTRY = "scripted-starter"
COLUMNS = {"n1": [], "n2": ["-n", "2", "-P", "thread"]}
RAN = re.compile(r"^\[recon\] ran\s+(attempt:\S+)\s+([0-9.]+)s$", re.MULTILINE)


def release_yaml(source: Path, attempts: int) -> str:
    """The demo release narrowed to one case and one entry, made formal on docker."""
    release = yaml.safe_load((source / "releases" / "demo.yaml").read_text())
    release.update(id=RELEASE, title="Attempt throughput benchmark (formal, docker)")
    release.update(cases=["html5-boilerplate"], entries=[ENTRY])
    release["protocol"].update(
        name="throughput-docker", repeats=attempts, backend="docker", formal=True
    )
    return str(yaml.safe_dump(release, sort_keys=False))


def make_base(source: Path, dest: Path, attempts: int) -> Path:
    """A project copy with the formal release, its upstream cells built."""
    dest.mkdir(parents=True)
    skip = shutil.ignore_patterns("__pycache__")
    for part in ("recon", "cases", "entries"):
        shutil.copytree(source / part, dest / part, ignore=skip)
    shutil.copy2(source / "dodo.py", dest / "dodo.py")
    (dest / "releases").mkdir()
    (dest / "releases" / f"{RELEASE}.yaml").write_text(release_yaml(source, attempts))
    entry = dest / "entries" / f"{ENTRY}.yaml"
    native, docker = "sandbox: {backend: native}", "sandbox: {backend: docker}"
    text = entry.read_text().replace(native, docker)
    if "backend: docker" not in text:
        raise SystemExit(f"{entry}: could not switch the entry to the docker backend")
    entry.write_text(text)
    doit(dest, "evidence", "workspace", "image")
    return dest


def doit(project: Path, *args: str) -> tuple[float, float, str]:
    """Run doit in ``project``; its wall time, CPU time and stderr."""
    env = {k: v for k, v in os.environ.items() if k not in ("RECON_STORE", "RECON_SEALED")}
    cpu_before = _children_cpu()
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "doit", *args],
        cwd=project, env=env, capture_output=True, text=True,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"doit {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return wall, _children_cpu() - cpu_before, proc.stderr


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def outcomes(project: Path) -> dict[str, list[str]]:
    """The reasons of the attempts' records, by outcome."""
    found: dict[str, list[str]] = {}
    for pointer in (project / "store" / "cells" / "attempt").glob("*.json"):
        digest = json.loads(pointer.read_text())["outputs"]["record"]["digest"]
        record = json.loads((project / "store" / "objects" / digest[:2] / digest).read_text())
        found.setdefault(record["outcome"], []).append(record["reason"])
    return found


def run_column(base: Path, work: Path, column: str, attempts: int) -> dict[str, Any]:
    clone = work / column
    shutil.copytree(base, clone, symlinks=True)
    wall, cpu, stderr = doit(clone, *COLUMNS[column], "attempt")
    ran = [float(took) for _, took in RAN.findall(stderr)]
    seen = outcomes(clone)
    if len(ran) != attempts or len(seen.get("valid", [])) != attempts:
        raise SystemExit(f"{column}: expected {attempts} valid attempts, ran {len(ran)}: {seen}")
    noop_wall, _, noop_err = doit(clone, *COLUMNS[column], "attempt")
    if RAN.search(noop_err):
        raise SystemExit(f"{column}: the no-op build ran attempts:\n{noop_err}")
    shutil.rmtree(clone)
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "noop_wall_s": round(noop_wall, 3),
        "net_wall_s": round(wall - noop_wall, 3),
        "attempt_cell_s": ran,
    }


def median(rows: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(r[key] for r in rows), 3)


def summarise(rows: list[dict[str, Any]], attempts: int) -> dict[str, Any]:
    cells = [t for r in rows for t in r["attempt_cell_s"]]
    net = median(rows, "net_wall_s")
    wall = median(rows, "wall_s")
    return {
        "wall_s": wall,
        "net_wall_s": net,
        "noop_wall_s": median(rows, "noop_wall_s"),
        "cpu_s": median(rows, "cpu_s"),
        "attempts_per_s": round(attempts / wall, 3),
        "attempts_per_s_net": round(attempts / net, 3),
        "attempt_cell_s_median": round(statistics.median(cells), 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--source", type=Path, default=REPO)
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "attempt_throughput.json")
    args = parser.parse_args()
    ensure_engine(state_dir=Settings.from_env().engine_state)
    image = find_image(engine_client(), default_recipe())
    if image is None:  # a cold build takes minutes and is measured by sandbox_overhead.py
        tag = default_recipe().tag
        raise SystemExit(f"sandbox image {tag} is not built; build it first (`make test` does)")
    load_at_start = [round(x, 2) for x in os.getloadavg()]
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in COLUMNS}
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp_name:
        tmp = Path(tmp_name)
        base = make_base(args.source.resolve(), tmp / "base", args.attempts)
        for i in range(args.rounds):
            order = list(COLUMNS) if i % 2 == 0 else list(reversed(COLUMNS))
            for column in order:
                rows[column].append(run_column(base, tmp, column, args.attempts))
    summary = {name: summarise(r, args.attempts) for name, r in rows.items()}
    result = {
        "params": {"attempts": args.attempts, "rounds": args.rounds, "entry": ENTRY},
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "engine": engine_client().version()["Version"],
            "image": image.tag,
            "loadavg_at_start": load_at_start,
            "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "summary": summary,
        "speedup_n2_over_n1": round(summary["n1"]["wall_s"] / summary["n2"]["wall_s"], 2),
        "speedup_n2_over_n1_net": round(
            summary["n1"]["net_wall_s"] / summary["n2"]["net_wall_s"], 2
        ),
        "rounds": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    keys = ("wall_s", "net_wall_s", "noop_wall_s", "cpu_s", "attempts_per_s",
            "attempts_per_s_net", "attempt_cell_s_median")  # fmt: skip
    print(f"{args.attempts} attempts, {args.rounds} rounds, medians")
    print(f"{'column':<8}" + "".join(f"{k:>22}" for k in keys))
    for name, s in summary.items():
        print(f"{name:<8}" + "".join(f"{s[k]:>22}" for k in keys))
    print(
        f"-n 2 -P thread over -n 1: {result['speedup_n2_over_n1']}x wall, "
        f"{result['speedup_n2_over_n1_net']}x net of doit's fixed cost"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
