"""The synthetic DAG that ``bench/dag_noop.py`` copies into each column as ``dodo.py``.

Every cell is a chain shaped like the real pipeline (workspace -> attempt -> capture ->
grade). Each task has a trivial python-action that writes a small pointer file under
``store/cells/<kind>/`` and depends, like ``recon.pipeline.tasks``, on its upstream
pointer file plus the cell's input file, with an ``uptodate=[config_changed(...)]``.
One ``aggregate`` task on top depends on every grade pointer and is the default task,
as ``release:<id>`` is in the real dodo.py, so doit schedules the DAG the way it does a
release (level by level: every workspace, then every attempt, ...).

Two environment variables set the column: ``BENCH_CELLS`` (number of cells) and
``BENCH_CHECKER``: ``md5`` (stock doit, ``get_file_md5`` wrapped to count calls) or
``blake3`` (``recon.pipeline.checker.blake3_checker`` over a ``StatCache``). Everything
else (backend, dep_file, reporter, tasks) is identical. At exit, ``hash_count.json``
gets the number of files the checker hashed and the seconds from the end of this
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
    """Our checker, with the stat cache where ``recon.pipeline.cells.Runtime`` keeps it."""
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
    if name == "blake3":
        return _recon_checker()
    raise SystemExit(f"BENCH_CHECKER must be md5 or blake3, not {name!r}")


CHECKER = _checker()
LOADED = time.perf_counter()  # everything either column imports is imported by now
DOIT_CONFIG = {
    "backend": "sqlite3",
    "dep_file": ".doit.db",
    "check_file_uptodate": CHECKER,
    "reporter": "executed-only",
    "default_tasks": ["aggregate"],
}


def write_pointer(kind: str, dependencies: list[str], targets: list[str]) -> None:
    """The trivial action: a pointer whose key depends on the bytes of every file_dep."""
    key = hashlib.sha256(kind.encode())
    for dep in sorted(dependencies):
        key.update(Path(dep).read_bytes())
    Path(targets[0]).write_text(json.dumps({"kind": kind, "key": key.hexdigest()}) + "\n")


def cell_tasks(name: str) -> Iterator[dict[str, Any]]:
    source = f"inputs/{name}.txt"
    upstream: str | None = None
    for kind in KINDS:
        target = f"store/cells/{kind}/{name}.json"
        yield {
            "basename": kind,
            "name": name,
            "actions": [(write_pointer, [kind])],
            "file_dep": [source] if upstream is None else [upstream, source],
            "targets": [target],
            "uptodate": [config_changed(f"{kind}-code-digest")],
        }
        upstream = target


def task_cells() -> Iterator[dict[str, Any]]:
    """Four tasks per cell, then the aggregate over every grade pointer."""
    names = [f"c{index:05d}" for index in range(int(os.environ["BENCH_CELLS"]))]
    for name in names:
        yield from cell_tasks(name)
    yield {
        "basename": "aggregate",
        "actions": [(write_pointer, ["aggregate"])],
        "file_dep": [f"store/cells/grade/{name}.json" for name in names],
        "targets": ["store/aggregate.json"],
        "uptodate": [config_changed("aggregate-code-digest")],
    }
