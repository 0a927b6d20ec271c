"""doit on a synthetic DAG: stock MD5 checker vs recon's blake3 + stat cache checker.

Builds two identical copies of a DAG of ``--cells`` cells (4 tasks each, plus one
aggregate; see ``bench/dag_dodo.py``) in a temp dir, then runs the same sequence of doit
builds on both, interleaved: cold build, no-ops, 1% of inputs changed, 1% of inputs
touched (same content). Every build is a fresh ``python -m doit`` subprocess, so its
time includes interpreter start-up, imports and loading the 4 × cells + 1 tasks. The
only difference between the columns is doit's ``check_file_uptodate``.

    .venv/bin/python bench/dag_noop.py [--cells 5000] [--out bench/results/dag_noop.json]

This is a report, not a test: it prints a table and writes JSON; it asserts no times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import doit

from recon.store.statcache import RACY_NS

BENCH = Path(__file__).resolve().parent
KINDS = ("workspace", "attempt", "capture", "grade")
SAMPLE_EVERY = 100  # 1% of cells
RACY_WAIT = RACY_NS / 1e9 + 0.5


@dataclass(frozen=True)
class Column:
    name: str  # "stock" or "ours"
    checker: str  # BENCH_CHECKER value
    root: Path


@dataclass
class Run:
    step: str
    column: str
    seconds: float  # wall time of the whole subprocess
    cpu: float  # its user + sys CPU time: steadier than wall time on a shared machine
    after_load: float  # from the end of dodo.py's imports to exit (see dag_dodo.py)
    executed: int  # tasks doit ran (lines of the executed-only reporter)
    hashed: int  # files the checker hashed (md5 calls / StatCache.hashed)


@dataclass(frozen=True)
class Step:
    key: str
    label: str
    mutate: Callable[[Column, int], None] | None = None
    wait: bool = False  # sleep past the stat cache's racy window first
    repeat: int = 1


# --- the DAG on disk ----------------------------------------------------------------


def input_name(index: int) -> str:
    return f"inputs/c{index:05d}.txt"


def generate(column: Column, payloads: list[bytes]) -> None:
    """Input files, pointer directories and the dodo.py of one column."""
    (column.root / "inputs").mkdir(parents=True)
    for kind in KINDS:
        (column.root / "store" / "cells" / kind).mkdir(parents=True)
    for index, payload in enumerate(payloads):
        (column.root / input_name(index)).write_bytes(payload)
    shutil.copyfile(BENCH / "dag_dodo.py", column.root / "dodo.py")


def sample(cells: int, offset: int) -> range:
    return range(offset, cells, SAMPLE_EVERY)


def change_inputs(column: Column, cells: int) -> None:
    """1% of inputs get new content (one line appended, as an editor would)."""
    for index in sample(cells, 0):
        with open(column.root / input_name(index), "ab") as handle:
            handle.write(b"changed\n")


def touch_inputs(column: Column, cells: int) -> None:
    """Another 1% of inputs get a new mtime and ctime, same bytes."""
    for index in sample(cells, SAMPLE_EVERY // 2):
        (column.root / input_name(index)).touch()


# --- running doit -------------------------------------------------------------------


def timed(argv: list[str], **kwargs: Any) -> tuple[float, float, subprocess.CompletedProcess]:
    """Run a child; its wall time and its CPU time (user + sys, from RUSAGE_CHILDREN)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, done


def run_doit(column: Column, cells: int, step: str) -> Run:
    env = {**os.environ, "BENCH_CHECKER": column.checker, "BENCH_CELLS": str(cells)}
    count_file = column.root / "hash_count.json"
    count_file.unlink(missing_ok=True)
    wall, cpu, done = timed([sys.executable, "-m", "doit"], cwd=column.root, env=env)
    if done.returncode != 0:
        raise SystemExit(f"doit failed in {column.root} ({step}):\n{done.stdout}{done.stderr}")
    executed = sum(1 for line in done.stdout.splitlines() if line.startswith(".  "))
    counts = json.loads(count_file.read_text())
    after_load = counts["seconds_after_load"]
    return Run(step, column.name, wall, cpu, after_load, executed, counts["hashed"])


def run_step(step: Step, columns: list[Column], cells: int, first: int) -> list[Run]:
    """Both columns, interleaved; which one goes first alternates from run to run."""
    if step.wait:
        time.sleep(RACY_WAIT)
    runs = []
    for rep in range(step.repeat):
        order = columns if (first + rep) % 2 == 0 else columns[::-1]
        for column in order:
            if step.mutate is not None:
                step.mutate(column, cells)  # right before this column's own build
            runs.append(run_doit(column, cells, step.key))
            print(f"  {step.key:<12} {column.name:<6} {runs[-1].seconds:7.2f} s", file=sys.stderr)
    return runs


def steps(noop_repeat: int) -> list[Step]:
    return [
        Step("cold", "cold full build", wait=True),
        Step("noop_first", "first no-op after cold build", wait=True),
        Step("noop", f"no-op (median of {noop_repeat})", repeat=noop_repeat),
        Step("changed", "1% inputs changed", mutate=change_inputs),
        Step("settle", "no-op after the change", wait=True),
        Step("touched_a", "1% touched: run A (right after)", mutate=touch_inputs),
        Step("touched_b", "1% touched: run B (racy wait)", wait=True),
        Step("touched_c", "1% touched: run C"),
    ]


# --- reporting ----------------------------------------------------------------------


MEASURES = ("seconds", "cpu", "after_load")


def summarise(runs: list[Run], plan: list[Step]) -> list[dict[str, Any]]:
    """One row per step: per column the medians of every measure and the counts; ratios."""
    rows = []
    for step in plan:
        row: dict[str, Any] = {"step": step.key, "label": step.label}
        for column in ("stock", "ours"):
            mine = [r for r in runs if r.step == step.key and r.column == column]
            row[column] = {m: statistics.median(getattr(r, m) for r in mine) for m in MEASURES}
            row[column]["all_seconds"] = [r.seconds for r in mine]
            row[column]["hashed"] = [r.hashed for r in mine]
            row[column]["executed"] = [r.executed for r in mine]
        row["ratio"] = {m: row["ours"][m] / row["stock"][m] for m in MEASURES}
        rows.append(row)
    return rows


HEADER = (
    f"{'':<32}{'wall, whole doit process':^33}{'CPU (user + sys)':^33}{'files hashed':^22}\n"
    f"{'step':<32}{'stock':>11}{'ours':>11}{'ours/stock':>11}{'stock':>11}{'ours':>11}"
    f"{'ours/stock':>11}{'stock':>11}{'ours':>11}{'tasks run':>11}"
)


def table(rows: list[dict[str, Any]]) -> str:
    lines = [HEADER, "-" * len(HEADER.splitlines()[1])]
    for row in rows:
        stock, ours, ratio = row["stock"], row["ours"], row["ratio"]
        ran = _count(stock["executed"])
        if ours["executed"] != stock["executed"]:
            ran += f"≠{_count(ours['executed'])}"  # the columns disagree: a checker bug
        lines.append(
            f"{row['label']:<32}{stock['seconds']:>9.2f} s{ours['seconds']:>9.2f} s"
            f"{ratio['seconds']:>10.2f}x{stock['cpu']:>9.2f} s{ours['cpu']:>9.2f} s"
            f"{ratio['cpu']:>10.2f}x{_count(stock['hashed']):>11}{_count(ours['hashed']):>11}"
            f"{ran:>11}"
        )
    return "\n".join(lines)


def _count(values: list[int]) -> str:
    """One number, or ``a/b/c`` when repeated runs differ."""
    return str(values[0]) if len(set(values)) == 1 else "/".join(map(str, values))


def import_seconds() -> dict[str, dict[str, float]]:
    """Median wall and CPU time of python + what each column's dodo.py imports."""
    snippets = {
        "stock": "import doit.doit_cmd",
        "ours": "import doit.doit_cmd, recon.pipeline.checker, recon.store",
    }
    found = {}
    for name, code in snippets.items():
        samples = [timed([sys.executable, "-c", code], check=True) for _ in range(5)]
        found[name] = {
            "wall": round(statistics.median(wall for wall, _, _ in samples), 3),
            "cpu": round(statistics.median(cpu for _, cpu, _ in samples), 3),
        }
    return found


def machine() -> dict[str, object]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "doit": ".".join(map(str, doit.__version__)),
    }


# --- main ---------------------------------------------------------------------------


def measure(cells: int, input_bytes: int, plan: list[Step]) -> list[Run]:
    rng = random.Random(5000)
    payloads = [f"cell {i}\n".encode() + rng.randbytes(input_bytes) for i in range(cells)]
    with tempfile.TemporaryDirectory(prefix="recon-dag-noop-") as tmp:
        columns = [
            Column("stock", "md5", Path(tmp) / "stock"),
            Column("ours", "blake3", Path(tmp) / "ours"),
        ]
        for column in columns:
            generate(column, payloads)
        runs: list[Run] = []
        for step in plan:
            runs += run_step(step, columns, cells, first=len(runs) // 2)
    return runs


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=5000, help="cells (4 doit tasks each)")
    parser.add_argument("--input-bytes", type=int, default=4096, help="size of each input file")
    parser.add_argument("--repeat", type=int, default=3, help="no-op runs per column (median)")
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "dag_noop.json")
    args = parser.parse_args(argv)
    if args.cells < SAMPLE_EVERY:
        parser.error(f"--cells must be at least {SAMPLE_EVERY} (1% of the cells are changed)")
    return args


def report(args: argparse.Namespace, imports: dict[str, dict[str, float]], runs: list[Run]) -> None:
    rows = summarise(runs, steps(args.repeat))
    tasks = 4 * args.cells + 1
    print(f"{args.cells} cells, {tasks} doit tasks, {os.cpu_count()} CPUs, {machine()['platform']}")
    print(table(rows))
    stock, ours = imports["stock"], imports["ours"]
    print(
        f"python + imports alone (wall / CPU): stock {stock['wall']:.2f} / {stock['cpu']:.2f} s,"
        f" ours {ours['wall']:.2f} / {ours['cpu']:.2f} s"
    )
    result = {
        "params": {
            "cells": args.cells,
            "tasks": tasks,
            "input_bytes": args.input_bytes,
            "racy_ns": RACY_NS,
            "sample_every": SAMPLE_EVERY,
            "noop_repeat": args.repeat,
        },
        "machine": machine(),
        "import_seconds": imports,
        "rows": rows,
        "runs": [asdict(run) for run in runs],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {args.out}")


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    imports = import_seconds()
    runs = measure(args.cells, args.input_bytes, steps(args.repeat))
    report(args, imports, runs)


if __name__ == "__main__":
    main(sys.argv[1:])
