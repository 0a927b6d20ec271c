"""Verify on read: what hashing every object as it is read costs a build.

Two columns, the same project copy built the same way; the only difference is
``RECON_VERIFY_ON_READ`` (``1``: every store read is hashed and compared with its digest,
the default; ``0``: reads trust the disk). For each column, in a fresh copy of the
project (``--source``, default this repository):

1. a **cold** ``doit release:demo`` (every cell runs: attempts, renders, grades);
2. a **no-op** rebuild (nothing is stale), ``--repeat`` times, median;
3. a **re-export**: ``releases/demo/`` deleted, so the release task reads the manifest,
   the release JSON and every site file back out of the store.

Each build is a fresh ``python -m doit`` subprocess; we record its wall time and its CPU
time (user + sys of the child, steadier on a shared machine). Separately, in-process:
reading every object of the cold store through ``Store.read_bytes`` with and without
verification (bytes per second). The columns alternate which goes first.

    .venv/bin/python bench/verify_cost.py [--repeat 3] [--source .] \
        [--out bench/results/verify_cost.json]

A report, not a test: it prints a table and writes JSON; it asserts no times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PARTS = ("dodo.py", "recon", "cases", "entries")


def copy_project(source: Path, dest: Path) -> Path:
    dest.mkdir(parents=True)
    for part in PARTS:
        src = source / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / part)
    (dest / "releases").mkdir()
    for release in (source / "releases").glob("*.yaml"):
        shutil.copy2(release, dest / "releases" / release.name)
    return dest


def build(project: Path, verify: bool) -> dict[str, float]:
    env = dict(os.environ)
    env.pop("RECON_STORE", None)
    env["RECON_VERIFY_ON_READ"] = "1" if verify else "0"
    env.setdefault("RECON_DEPS", str(REPO / "store" / "deps"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "doit", "release:demo"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"doit failed in {project}:\n{proc.stdout}\n{proc.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3)}


def read_all(store_root: Path, verify: bool) -> dict[str, float]:
    from recon.store import Store

    store = Store(store_root, verify=verify)
    digests = list(store.iter_digests())
    started = time.process_time()
    size = sum(len(store.read_bytes(d)) for d in digests)
    took = time.process_time() - started
    return {"objects": len(digests), "bytes": size, "cpu_s": round(took, 4)}


def column(source: Path, tmp: Path, verify: bool, repeat: int) -> dict[str, Any]:
    project = copy_project(source, tmp / ("on" if verify else "off"))
    out: dict[str, Any] = {"cold": build(project, verify)}
    time.sleep(1.1)  # past the stat cache's racy window
    build(project, verify)  # the first no-op settles racy pointer files
    noops = [build(project, verify) for _ in range(repeat)]
    out["noop"] = {k: statistics.median(n[k] for n in noops) for k in ("wall_s", "cpu_s")}
    exports = []
    for _ in range(repeat):
        shutil.rmtree(project / "releases" / "demo")
        exports.append(build(project, verify))
    out["reexport"] = {k: statistics.median(n[k] for n in exports) for k in ("wall_s", "cpu_s")}
    out["read_all"] = read_all(project / "store", verify)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--source", type=Path, default=REPO)
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/verify_cost.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="recon-bench-verify-") as tmp:
        results = {}
        for verify in (False, True) if os.getpid() % 2 else (True, False):
            results["on" if verify else "off"] = column(args.source, Path(tmp), verify, args.repeat)
    on, off = results["on"], results["off"]
    rows = []
    for step in ("cold", "noop", "reexport", "read_all"):
        for measure in ("wall_s", "cpu_s") if step != "read_all" else ("cpu_s",):
            a, b = on[step][measure], off[step][measure]
            rows.append((step, measure, a, b, a - b, (a - b) / b if b else 0.0))
    print(f"{'step':<10}{'measure':<9}{'verify on':>11}{'off':>9}{'cost':>9}{'cost %':>9}")
    for step, measure, a, b, cost, share in rows:
        print(f"{step:<10}{measure:<9}{a:>11.3f}{b:>9.3f}{cost:>9.3f}{share * 100:>8.1f}%")
    read = on["read_all"]
    print(f"read_all: {read['objects']} objects, {read['bytes'] / 1e6:.1f} MB")
    load = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load": load},
        "repeat": args.repeat,
        "results": results,
        "rows": [
            dict(zip(("step", "measure", "on", "off", "cost", "share"), r, strict=True))
            for r in rows
        ],
    }
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
