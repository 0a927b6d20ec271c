"""doit tasks: one per cell, named ``kind:<cell>``, plus ``release:<id>`` on top."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from doit.exceptions import TaskFailed
from doit.tools import config_changed

from recon.errors import ReconError
from recon.pipeline.cells import Cell, Runtime, load_pointer, run_cell, walk
from recon.pipeline.checker import blake3_checker
from recon.pipeline.graph import Graph
from recon.pipeline.project import Project
from recon.pipeline.publish import FILES, publish
from recon.store import digest_json

BROWSER_KINDS = ("oracle", "capture", "probe")


class Pipeline:
    """What dodo.py asks for: the doit config and the task dicts of every release."""

    def __init__(self, project: Project) -> None:
        project.validate()
        self.project = project
        self.rt = Runtime(project)
        self.graph = Graph(project, self.rt.stat, self.rt.codes)
        self.roots = {rid: self.graph.release(rel) for rid, rel in project.releases.items()}

    @classmethod
    def open(cls, root: Path) -> Pipeline:
        return cls(Project.open(root))

    def doit_config(self) -> dict[str, Any]:
        return {
            "check_file_uptodate": blake3_checker(self.rt.stat),
            "dep_file": str(self.project.root / ".doit.db"),
            "backend": "sqlite3",
            "default_tasks": [f"release:{rid}" for rid in sorted(self.roots)],
            "verbosity": 1,
        }

    def _rel(self, path: Path | str) -> str:
        return os.path.relpath(path, self.project.root)

    def tasks(self) -> Iterator[dict[str, Any]]:
        for cell in walk(list(self.roots.values())):
            yield self._cell_task(cell)
        for rid, root in sorted(self.roots.items()):
            yield self._release_task(rid, root)

    def _cell_task(self, cell: Cell) -> dict[str, Any]:
        code = self.rt.code(cell.kind)
        deps = [self._rel(self.rt.pointer_path(d)) for d in cell.deps.values()]
        deps += [self._rel(f) for f in self.graph.files[cell.id]]
        uptodate: list[Any] = [config_changed(digest_json({"code": code, "params": cell.params}))]
        if cell.kind == "attempt":
            uptodate.append((_no_retry_pending, [str(self.rt.pointer_path(cell))]))
        return {
            "basename": cell.kind,
            "name": cell.name,
            "doc": f"{cell.kind} cell",
            "actions": [(self._run, [cell])],
            "file_dep": sorted(set(deps)),
            "targets": [self._rel(self.rt.pointer_path(cell))],
            "uptodate": uptodate,
            # doit runs teardowns once, at the end of the run: close the shared browser.
            "teardown": [self.rt.close] if cell.kind in BROWSER_KINDS else [],
        }

    def _run(self, cell: Cell) -> TaskFailed | None:
        try:
            run_cell(self.rt, cell)
        except ReconError as err:
            return TaskFailed(f"{cell.id}: {err}")
        return None

    def _release_task(self, rid: str, root: Cell) -> dict[str, Any]:
        out = self.project.root / "releases" / rid
        # The attempts' pointers too: a re-run attempt's run metadata goes to runs.json.
        attempts = [c for c in walk([root]) if c.kind == "attempt"]
        return {
            "basename": "release",
            "name": rid,
            "doc": f"build release {rid}: every cell, then releases/{rid}/",
            "actions": [(self._export, [rid, root])],
            "file_dep": [self._rel(self.rt.pointer_path(c)) for c in [root, *attempts]],
            "targets": [self._rel(out / name) for name in FILES if "." in name],
        }

    def _export(self, rid: str, root: Cell) -> TaskFailed | None:
        """Write releases/<id>/ (release JSON, manifest, runs, site), verified and atomic."""
        try:
            publish(self.rt, rid, root, self.project.root / "releases" / rid)
        except ReconError as err:
            return TaskFailed(f"release:{rid}: {err}")
        return None


def _no_retry_pending(pointer: str) -> bool:
    """An attempt that ended in a harness failure is retried on the next build."""
    found = load_pointer(Path(pointer))
    return found is not None and not found.retry
