"""The dodo file ``bench/dag_real.py`` copies into each column of the real pipeline, as
``bench_dodo.py`` beside the project's own ``dodo.py``; doit runs it with ``-f``.

``BENCH_COLUMN`` picks the column:

- ``recon``: the project's ``dodo.py`` itself, run as it is (``runpy``): recon's blake3
  file checker over the stat cache, the release-level stamp, and lazily created cell tasks
  when the stamp holds (:mod:`recon.pipeline.stamp`); when the cached no-op plan holds
  too, no task setup at all (:mod:`recon.pipeline.noop`).
- ``stock``: the same ``Pipeline`` (the same cells, the same task dicts, the same actions,
  the same reporter and sqlite3 state file) with recon's fast paths taken out: doit's
  default ``md5`` file checker (its module-level ``get_file_md5`` wrapped to count calls),
  every task created eagerly by doit's own loader (no stamp is read, no no-op plan is
  read or written: ``Pipeline.open`` derives the tasks on every run), and no stamp written
  after a build.

At exit, ``bench_counts.json`` gets the files the md5 checker hashed (stock), the files the
stat cache hashed (both columns: recon's keys are computed from it in both), and this
process's own CPU seconds (not its children's) in three parts: until this module starts
(interpreter start-up, doit's imports), the setup (recon's imports, ``Pipeline.open``: the
project's files, the cells and their keys, every kind's code digest; the task creators),
and doit's own work after it (loading and checking tasks, running actions in-process).
"""

import atexit
import json
import os
import runpy
import time
from pathlib import Path
from typing import Any

import doit.dependency
from doit import get_var

CPU_START = time.process_time()  # doit, which loads this file, has imported all of the above

ROOT = Path(__file__).resolve().parent
COUNTS = ROOT / "bench_counts.json"
COLUMN = os.environ["BENCH_COLUMN"]
EXPORTED = ("DOIT_CONFIG", "PIPELINE")
MD5_CALLS = [0]


def _count_md5() -> None:
    original = doit.dependency.get_file_md5

    def counting_md5(path: str) -> str:
        MD5_CALLS[0] += 1
        return str(original(path))

    doit.dependency.get_file_md5 = counting_md5


def _stock() -> dict[str, Any]:
    """The project's tasks with doit's defaults: md5, eager task creation, no stamps."""
    from recon.pipeline import Pipeline
    from recon.project import Project
    from recon.project.settings import Settings

    class StockPipeline(Pipeline):
        def stamps_hold(self) -> bool:
            return False  # every kind's creator is a plain one: doit loads every task

        def save_stamps(self, releases: list[str], executed: bool) -> None:
            pass

    _count_md5()
    names = ("regrade", "executor", "address", "progress")
    project = Project.open(ROOT, Settings.from_env())
    pipeline = StockPipeline.open(project, {name: get_var(name) for name in names})
    config = {**pipeline.doit_config(), "check_file_uptodate": "md5"}
    return {"PIPELINE": pipeline, "DOIT_CONFIG": config, **pipeline.task_creators()}


def _recon() -> dict[str, Any]:
    found = runpy.run_path(str(ROOT / "dodo.py"))
    return {k: v for k, v in found.items() if k in EXPORTED or k.startswith("task_")}


def _write_counts() -> None:
    # recon's no-op gets a NoopPipeline (recon.pipeline.noop): its stat cache, no Runtime
    stat = PIPELINE.stat if hasattr(PIPELINE, "stat") else PIPELINE.rt.stat
    stat.flush()
    counts = {
        "md5": MD5_CALLS[0],
        "stat_hashed": stat.hashed,
        "cpu_start_s": round(CPU_START, 3),
        "cpu_setup_s": round(CPU_LOADED - CPU_START, 3),
        "cpu_doit_s": round(time.process_time() - CPU_LOADED, 3),
        "wall_doit_s": round(time.perf_counter() - LOADED, 3),
    }
    COUNTS.write_text(json.dumps(counts) + "\n")


if COLUMN not in ("stock", "recon"):
    raise SystemExit(f"BENCH_COLUMN must be stock or recon, not {COLUMN!r}")
NAMESPACE = _stock() if COLUMN == "stock" else _recon()
globals().update(NAMESPACE)
PIPELINE = NAMESPACE["PIPELINE"]
LOADED, CPU_LOADED = time.perf_counter(), time.process_time()
atexit.register(_write_counts)
