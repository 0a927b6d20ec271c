"""doit on a synthetic DAG: stock doit, recon's blake3 + stat cache checker, and that
checker plus recon's release-level stamp with lazily created cell tasks.

Builds three identical copies of a DAG of ``--cells`` cells (4 tasks each, plus one
aggregate; see ``bench/dag_dodo.py``) in a temp dir, then runs the same sequence of doit
builds on each, interleaved: cold build, no-ops, 1% of inputs changed, a re-grade (the
grade kind's code digest changed), 1% of inputs touched (same content). Every build is a
fresh ``python -m doit`` subprocess, so its time includes interpreter start-up, imports
and loading the tasks; its peak memory is the child's maximum resident set (``wait4``).
The columns differ only in what ``bench/dag_dodo.py`` does with ``BENCH_CHECKER``.

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


@dataclass
class Column:
    name: str  # "stock", "ours" or "fast"
    checker: str  # BENCH_CHECKER value
    root: Path
    grade_code: str = ""  # BENCH_GRADE_CODE: set by the re-grade step


COLUMNS = (("stock", "md5"), ("ours", "blake3"), ("fast", "fast"))
REPO = BENCH.parent


@dataclass
class Run:
    step: str
    column: str
    seconds: float  # wall time of the whole subprocess
    cpu: float  # its user + sys CPU time: steadier than wall time on a shared machine
    after_load: float  # from the end of dodo.py's imports to exit (see dag_dodo.py)
    executed: int  # tasks doit ran (lines of the executed-only reporter)
    hashed: int  # files the checker hashed (md5 calls / StatCache.hashed)
    peak_mib: float = 0.0  # the child's maximum resident set


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


def regrade(column: Column, cells: int) -> None:
    """The grader's code changed: every grade task and the aggregate run again."""
    column.grade_code = "-edited"


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


def timed_peak(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, float, str]:
    """Run a child: its wall time, CPU time, peak resident MiB (its own ``wait4``), stdout."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, problem = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise SystemExit(f"doit failed in {cwd}:\n{text}{problem}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text


def run_doit(column: Column, cells: int, step: str) -> Run:
    # PYTHONPATH: the column's dodo imports this checkout's recon, whatever is installed.
    env = {**os.environ, "BENCH_CHECKER": column.checker, "BENCH_CELLS": str(cells),
           "BENCH_GRADE_CODE": column.grade_code, "PYTHONPATH": str(REPO)}  # fmt: skip
    count_file = column.root / "hash_count.json"
    count_file.unlink(missing_ok=True)
    wall, cpu, peak, stdout = timed_peak([sys.executable, "-m", "doit"], column.root, env)
    executed = sum(1 for line in stdout.splitlines() if line.startswith(".  "))
    counts = json.loads(count_file.read_text())
    after_load = counts["seconds_after_load"]
    return Run(step, column.name, wall, cpu, after_load, executed, counts["hashed"], peak)


def run_step(step: Step, columns: list[Column], cells: int, first: int) -> list[Run]:
    """Every column, interleaved; the order rotates from run to run."""
    if step.wait:
        time.sleep(RACY_WAIT)
    runs = []
    for rep in range(step.repeat):
        turn = (first + rep) % len(columns)
        order = columns[turn:] + columns[:turn]
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
        Step("regrade", "re-grade (grade code edited)", mutate=regrade, wait=True),
        Step("settle_regrade", "no-op after the re-grade", wait=True),
        Step("noop_again", "no-op again", repeat=noop_repeat),
        Step("touched_a", "1% touched: run A (right after)", mutate=touch_inputs),
        Step("touched_b", "1% touched: run B (racy wait)", wait=True),
        Step("touched_c", "1% touched: run C"),
    ]


# --- reporting ----------------------------------------------------------------------


MEASURES = ("seconds", "cpu", "after_load", "peak_mib")
NAMES = [name for name, _ in COLUMNS]


def summarise(runs: list[Run], plan: list[Step]) -> list[dict[str, Any]]:
    """One row per step: per column the medians of every measure and the counts; each
    column's ratios to stock."""
    rows = []
    for step in plan:
        row: dict[str, Any] = {"step": step.key, "label": step.label}
        for column in NAMES:
            mine = [r for r in runs if r.step == step.key and r.column == column]
            row[column] = {m: statistics.median(getattr(r, m) for r in mine) for m in MEASURES}
            row[column]["all_seconds"] = [r.seconds for r in mine]
            row[column]["hashed"] = [r.hashed for r in mine]
            row[column]["executed"] = [r.executed for r in mine]
        row["ratio"] = {c: {m: row[c][m] / row["stock"][m] for m in MEASURES} for c in NAMES[1:]}
        rows.append(row)
    return rows


HEADER = (
    f"{'':<30}{'wall, whole doit process':^40}{'CPU (user + sys)':^40}{'peak MiB':^21}\n"
    f"{'step':<30}{'stock':>9}{'ours':>9}{'fast':>9}{'ours/st':>8}{'fast/st':>8}"
    f"{'stock':>9}{'ours':>9}{'fast':>9}{'ours/st':>8}{'fast/st':>8}"
    f"{'stock':>7}{'ours':>7}{'fast':>7}{'tasks run':>11}"
)


def table(rows: list[dict[str, Any]]) -> str:
    lines = [HEADER, "-" * len(HEADER.splitlines()[1])]
    for row in rows:
        ran = _count(row["stock"]["executed"])
        for other in NAMES[1:]:
            if row[other]["executed"] != row["stock"]["executed"]:
                ran += f"≠{_count(row[other]['executed'])}"  # columns disagree: a bug
        cells = [row["label"][:29].ljust(30)]
        for measure in ("seconds", "cpu"):
            cells += [f"{row[c][measure]:>8.2f}s" for c in NAMES]
            cells += [f"{row['ratio'][c][measure]:>7.2f}x" for c in NAMES[1:]]
        cells += [f"{row[c]['peak_mib']:>7.0f}" for c in NAMES]
        lines.append("".join(cells) + f"{ran:>11}")
    return "\n".join(lines)


def _count(values: list[int]) -> str:
    """One number, or ``a/b/c`` when repeated runs differ."""
    return str(values[0]) if len(set(values)) == 1 else "/".join(map(str, values))


def import_seconds() -> dict[str, dict[str, float]]:
    """Median wall and CPU time of python + what each column's dodo.py imports."""
    snippets = {
        "stock": "import doit.doit_cmd",
        "ours": "import doit.doit_cmd, recon.pipeline.checker, recon.store",
        "fast": "import doit.doit_cmd, recon.pipeline.checker, recon.store, recon.pipeline.stamp",
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
        columns = [Column(name, checker, Path(tmp) / name) for name, checker in COLUMNS]
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
    print(
        "python + imports alone (wall / CPU): "
        + ", ".join(f"{c} {imports[c]['wall']:.2f} / {imports[c]['cpu']:.2f} s" for c in NAMES)
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
