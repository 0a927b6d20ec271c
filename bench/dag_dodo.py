"""The synthetic DAG that ``bench/dag_noop.py`` copies into each column as ``dodo.py``.

Every cell is a chain shaped like the real pipeline (workspace -> attempt -> capture ->
grade). Each task has a trivial python-action that writes a small pointer file under
``store/cells/<kind>/`` and depends, like ``recon.pipeline.tasks``, on its upstream
pointer file plus the cell's input file, with an ``uptodate=[config_changed(...)]``.
One ``aggregate`` task on top depends on every grade pointer and is the default task,
as ``release:<id>`` is in the real dodo.py, so doit schedules the DAG the way it does a
release (level by level: every workspace, then every attempt, ...).

Two environment variables set the column: ``BENCH_CELLS`` (number of cells) and
``BENCH_CHECKER``: ``md5`` (stock doit, ``get_file_md5`` wrapped to count calls),
``blake3`` (``recon.pipeline.checker.blake3_checker`` over a ``StatCache``) or ``fast``
(the same checker plus recon's release-level stamp, :mod:`recon.pipeline.stamp`, as
``recon.pipeline.tasks`` uses it: when every file's stat key is what the last complete
build stamped, each kind's task creator is one of doit's delayed creators, so doit
creates the 20,000 cell tasks only if something asks for them, and checks the
aggregate's own dependencies; a reporter stamps a complete build).
Everything else (backend, dep_file, reporter output, tasks) is identical.
``BENCH_GRADE_CODE``, when set, changes the grade kind's stand-in code digest (a
re-grade: every grade task and the aggregate run again). At exit,
``hash_count.json`` gets the number of files the checker hashed and the seconds from the end of this
module's imports to exit (doit's own work, without interpreter start-up and imports).
"""

import atexit
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import doit.dependency
from doit import create_after
from doit.tools import config_changed

KINDS = ("workspace", "attempt", "capture", "grade")
HASH_COUNT = Path("hash_count.json").resolve()


def _write_count(count: int) -> None:
    seconds = time.perf_counter() - LOADED
    HASH_COUNT.write_text(json.dumps({"hashed": count, "seconds_after_load": seconds}) + "\n")


def _stock_checker() -> str:
    """doit's default MD5 checker, its module-level md5 function wrapped to count calls."""
    original = doit.dependency.get_file_md5
    calls = [0]

    def counting_md5(path: str) -> str:
        calls[0] += 1
        return original(path)

    doit.dependency.get_file_md5 = counting_md5
    atexit.register(lambda: _write_count(calls[0]))
    return "md5"


def _recon_checker() -> Any:
    """Our checker, with the stat cache where ``recon.pipeline.runtime.Runtime`` keeps it."""
    from recon.pipeline.checker import blake3_checker
    from recon.store import StatCache

    stat = StatCache(Path("store/state/stat.sqlite").resolve())

    def finish() -> None:
        stat.flush()  # its own atexit flush runs after this one and then has nothing to do
        _write_count(stat.hashed)

    atexit.register(finish)
    return blake3_checker(stat)


def _checker() -> Any:
    name = os.environ["BENCH_CHECKER"]
    if name == "md5":
        return _stock_checker()
    if name in ("blake3", "fast"):
        return _recon_checker()
    raise SystemExit(f"BENCH_CHECKER must be md5, blake3 or fast, not {name!r}")


def code(kind: str) -> str:
    """The stand-in code digest of a kind; ``BENCH_GRADE_CODE`` edits the grader's."""
    edit = os.environ.get("BENCH_GRADE_CODE", "") if kind == "grade" else ""
    return f"{kind}-code-digest{edit}"


def _names() -> list[str]:
    return [f"c{index:05d}" for index in range(int(os.environ["BENCH_CELLS"]))]


def _stamp() -> Any:
    """The release-level stamp over every input, pointer and the aggregate's target."""
    import sys

    from recon.pipeline.stamp import ReleaseStamp, plain_run

    names = _names()
    files = [f"inputs/{n}.txt" for n in names] + ["store/aggregate.json"]
    files += [f"store/cells/{kind}/{n}.json" for kind in KINDS for n in names]
    facts = {"kinds": KINDS, "cells": len(names), "code": [code(k) for k in KINDS]}
    stamp = ReleaseStamp(Path("store/state/stamp.json").resolve(), facts, files)
    return stamp, plain_run(sys.argv) and stamp.holds()


def _reporter() -> Any:
    """The executed-only reporter; in the ``fast`` column it stamps a complete build."""
    if os.environ["BENCH_CHECKER"] != "fast":
        return "executed-only"
    from doit.reporter import ExecutedOnlyReporter

    class StampingReporter(ExecutedOnlyReporter):  # type: ignore[misc]
        ran = False

        def execute_task(self, task: Any) -> None:
            self.ran = True
            super().execute_task(task)

        def complete_run(self) -> None:
            super().complete_run()
            if not self.failures and not self.runtime_errors and (self.ran or not FAST):
                STAMP.save()

    return StampingReporter


CHECKER = _checker()
STAMP, FAST = _stamp() if os.environ["BENCH_CHECKER"] == "fast" else (None, False)
LOADED = time.perf_counter()  # everything either column imports is imported by now
DOIT_CONFIG = {
    "backend": "sqlite3",
    "dep_file": ".doit.db",
    "check_file_uptodate": CHECKER,
    "reporter": _reporter(),
    "default_tasks": ["aggregate"],
}


def write_pointer(kind: str, dependencies: list[str], targets: list[str]) -> None:
    """The trivial action: a pointer whose key depends on the bytes of every file_dep."""
    key = hashlib.sha256(kind.encode())
    for dep in sorted(dependencies):
        key.update(Path(dep).read_bytes())
    Path(targets[0]).write_text(json.dumps({"kind": kind, "key": key.hexdigest()}) + "\n")


def kind_tasks(kind: str, names: list[str]) -> Iterator[dict[str, Any]]:
    """One task per cell of ``kind``, reading its upstream pointer and its input."""
    upstream = KINDS[KINDS.index(kind) - 1] if kind != KINDS[0] else None
    for name in names:
        source = f"inputs/{name}.txt"
        deps = [source] if upstream is None else [f"store/cells/{upstream}/{name}.json", source]
        yield {
            "basename": kind,
            "name": name,
            "actions": [(write_pointer, [kind])],
            "file_dep": deps,
            "targets": [f"store/cells/{kind}/{name}.json"],
            "uptodate": [config_changed(code(kind))],
        }


def creator(kind: str) -> Any:
    """The task creator of one kind; lazy (a doit delayed creator) when the stamp holds."""

    def create() -> Iterator[dict[str, Any]]:
        yield from kind_tasks(kind, _names())

    create.__doc__ = f"{kind} cells"
    return create_after()(create) if FAST else create


def task_aggregate() -> dict[str, Any]:
    """The aggregate over every grade pointer (the default task)."""
    return {
        "actions": [(write_pointer, ["aggregate"])],
        "file_dep": [f"store/cells/grade/{name}.json" for name in _names()],
        "targets": ["store/aggregate.json"],
        "uptodate": [config_changed("aggregate-code-digest")],
    }


task_workspace, task_attempt, task_capture, task_grade = (creator(k) for k in KINDS)
