"""doit tasks: one per cell, named ``kind:<cell>``, plus ``release:<id>`` on top."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from doit.exceptions import TaskFailed
from doit.tools import config_changed

from recon.errors import ReconError
from recon.pipeline.cells import Cell, Runtime, run_cell, walk
from recon.pipeline.checker import blake3_checker
from recon.pipeline.compute import COMPUTE, build_extra, evidence_extra, oracle_extra
from recon.pipeline.graph import Graph
from recon.pipeline.project import Project
from recon.store import checkout_tree, digest_json, write_atomic

BROWSER_KINDS = ("oracle", "capture", "probe")


class Pipeline:
    """What dodo.py asks for: the doit config and the task dicts of every release."""

    def __init__(self, project: Project, browser: str | None = None) -> None:
        project.validate()
        self.project = project
        self.rt = Runtime(project)
        if browser is None:
            from recon.render import browser_version

            browser = browser_version()
        self.graph = Graph(project, self.rt.stat, browser)
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
            run_cell(self.rt, cell, COMPUTE[cell.kind], self._extra(cell))
        except ReconError as err:
            return TaskFailed(f"{cell.id}: {err}")
        return None

    def _extra(self, cell: Cell) -> dict[str, str]:
        if cell.kind == "evidence":
            return evidence_extra(self.rt, self.project.cases[cell.name].public)
        if cell.kind == "oracle":
            return oracle_extra(self.rt, self.project.cases[cell.params["case"]].reference)
        which = cell.params.get("build")
        if which is not None:  # a case's own reference or starter, rendered for comparison
            case = self.project.cases[cell.params["case"]]
            return build_extra(
                self.rt, case.reference if which == "reference" else case.starter_build
            )
        return {}

    def _release_task(self, rid: str, root: Cell) -> dict[str, Any]:
        out = self.project.root / "releases" / rid
        return {
            "basename": "release",
            "name": rid,
            "doc": f"build release {rid}: every cell, then releases/{rid}/",
            "actions": [(self._export, [rid, root])],
            "file_dep": [self._rel(self.rt.pointer_path(root))],
            "targets": [self._rel(out / "release.json"), self._rel(out / "manifest.json")],
        }

    def _export(self, rid: str, root: Cell) -> TaskFailed | None:
        """Copy the release JSON, the manifest and the site out of the store."""
        try:
            store = self.rt.store
            manifest = store.read_json(self.rt.read_pointer(root).outputs["manifest"].digest)
            out = self.project.root / "releases" / rid
            release = store.read_json(manifest["release_json"])
            write_atomic(out / "release.json", _pretty(release))
            site = out / "site"
            if site.exists():
                shutil.rmtree(site)
            checkout_tree(store, manifest["site"], site)
            write_atomic(out / "manifest.json", _pretty(manifest))
        except ReconError as err:
            return TaskFailed(f"release:{rid}: {err}")
        return None


def _pretty(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def _no_retry_pending(pointer: str) -> bool:
    """An attempt that ended in a harness failure is retried on the next build."""
    try:
        return not json.loads(Path(pointer).read_bytes()).get("retry", False)
    except FileNotFoundError:
        return False
