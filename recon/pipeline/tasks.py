"""doit tasks: one per cell, named ``kind:<cell>``, plus ``release:<id>`` on top."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection, Iterator, Mapping
from pathlib import Path
from typing import Any

from doit import create_after
from doit.exceptions import TaskFailed
from doit.tools import config_changed

from recon.errors import ReconError
from recon.model import Manifest, ManifestInputs
from recon.model.kinds import BROWSER_KINDS, KIND_MODULES
from recon.pipeline.cells import run_cell
from recon.pipeline.door import FrontDoor, Options, not_stale, refuse, stale_path
from recon.pipeline.executor import ExecutorChoice
from recon.pipeline.graph import Graph
from recon.pipeline.progress import Tracker
from recon.pipeline.publish import FILES, STALE, publish
from recon.pipeline.runtime import Cell, Runtime, load_pointer, walk
from recon.pipeline.stamp import ReleaseStamp, plain_run, project_files, requested, stamp_path
from recon.pipeline.view import CellFailed
from recon.project.loader import Project
from recon.release import lock
from recon.store import digest_json
from recon.store.disk import space_for


class Pipeline(FrontDoor):
    """The whole build: the task dicts of every release (:mod:`recon.pipeline.door`).

    A frozen release (``releases/<id>.lock``) whose inputs differ from its lock gets no
    cells: its ``release:<id>`` task refuses to build (exit 2), naming what changed,
    unless ``regrade`` names it; then it builds manifest version n + 1 and re-locks.
    """

    def __init__(
        self,
        project: Project,
        regrade: Collection[str] = (),
        executor: ExecutorChoice | None = None,
        progress: str = "plain",
    ) -> None:
        project.validate()
        self.project = project
        choice = executor or ExecutorChoice()
        self.tracker = Tracker(project.store_root, choice.name)
        self.view = progress
        self.rt = Runtime(project, choice.open(), self.tracker)
        self.stat = self.rt.stat
        self.graph = Graph(project, self.rt.stat, self.rt.codes)
        self.refused: dict[str, str] = {}  # release id -> why it is not built
        self.regrading: set[str] = set()
        for rid in sorted(project.releases):
            self._check_lock(rid, rid in regrade)
        self.roots = {
            rid: self.graph.release(rel)
            for rid, rel in project.releases.items()
            if rid not in self.refused
        }

    @classmethod
    def open(cls, project: Project, doit_vars: Mapping[str, str | None]) -> Pipeline:
        """From doit's variables (:class:`~recon.pipeline.door.Options`)."""
        options = Options.parse(doit_vars, project.settings)
        return cls(project, options.regrade, options.executor, options.view)

    def _check_lock(self, rid: str, regrade: bool) -> None:
        found = lock.load(self.project.root, rid)
        if found is None:
            return
        release = self.project.releases[rid]
        inputs = ManifestInputs.model_validate(self.graph.manifest_inputs(release)).flat()
        moved = lock.changed(found, inputs)
        if not moved:
            self.graph.versions[rid] = found.version
        elif regrade:
            self.graph.versions[rid] = found.version + 1
            self.regrading.add(rid)
        else:
            self.refused[rid] = lock.refusal(rid, found, moved)

    def default_releases(self) -> list[str]:
        return sorted(self.roots)

    def progress_cells(self) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        cells = {c.id: c for c in walk(list(self.roots.values()))}
        releases: dict[str, list[Any]] = {r: list(walk([c])) for r, c in self.roots.items()}
        return cells, releases

    def _rel(self, path: Path | str) -> str:
        return os.path.relpath(path, self.project.root)

    def tasks(self) -> Iterator[dict[str, Any]]:
        """Every task: the cells, then each release (or its refusal)."""
        for cell in walk(list(self.roots.values())):
            yield self._cell_task(cell)
        yield from self._release_tasks()

    def _release_tasks(self) -> Iterator[dict[str, Any]]:
        for rid, root in sorted(self.roots.items()):
            yield self._release_task(rid, root)
        for rid, why in sorted(self.refused.items()):
            yield self._refused_task(rid, why)

    def task_creators(self) -> dict[str, Callable[[], Iterator[dict[str, Any]]]]:
        """dodo.py's task creators: ``task_release`` and one per cell kind.

        When every release's stamp holds (:mod:`recon.pipeline.stamp`) on a plain ``doit``
        run, each kind's creator is one of doit's delayed creators: doit creates its cell
        tasks only if something asks for one (a cell named on the command line), so a no-op
        costs one stat pass and the release tasks' own checks."""
        lazy = self.lazy = self.stamps_hold()
        creators: dict[str, Callable[[], Iterator[dict[str, Any]]]] = {}
        cells = list(walk(list(self.roots.values())))
        for kind in KIND_MODULES:
            mine = [c for c in cells if c.kind == kind]

            def create(mine: list[Cell] = mine) -> Iterator[dict[str, Any]]:
                for cell in mine:
                    yield self._cell_task(cell)

            create.__doc__ = f"{kind} cells"
            creators[f"task_{kind}"] = create_after()(create) if lazy else create

        def release() -> Iterator[dict[str, Any]]:
            yield from self._release_tasks()

        release.__doc__ = "build a release: every cell, then releases/<id>/"
        creators["task_release"] = release
        return creators

    def cells(self, rid: str) -> list[Cell]:
        """Every cell of release ``rid``, dependencies first."""
        return list(walk([self.roots[rid]]))

    def kind_tasks(self, kind: str) -> Iterator[dict[str, Any]]:
        """The task of every cell of ``kind`` (:mod:`recon.pipeline.noop` creates them)."""
        for cell in walk(list(self.roots.values())):
            if cell.kind == kind:
                yield self._cell_task(cell)

    def release_task(self, rid: str) -> dict[str, Any]:
        return self._release_task(rid, self.roots[rid])

    def refused_task(self, rid: str) -> dict[str, Any]:
        return self._refused_task(rid, self.refused[rid])

    def export(self, rid: str) -> TaskFailed | None:
        return self._export(rid, self.roots[rid])

    def stamp(self, rid: str) -> ReleaseStamp:
        """The stamp of release ``rid``: its cells' files and pointers, its outputs, every
        project and code file; the cells, code digests and re-grade choices as facts."""
        cells = list(walk([self.roots[rid]]))
        out = self.project.root / "releases" / rid
        files = [f for c in cells for f in self.graph.files[c.id]]
        files += [str(self.rt.pointer_path(c)) for c in cells]
        files += [str(out / name) for name in (*FILES, STALE) if "." in name]
        files += project_files(self.project.root, self.project.sealed_root,
                               self.project.settings.chromium)  # fmt: skip
        facts = {
            "release": rid,
            "cells": [c.id for c in cells],
            "code": {kind: self.rt.code(kind) for kind in KIND_MODULES},
            "regrade": rid in self.regrading,
            "version": self.graph.versions.get(rid),
            "store": str(self.project.store_root),
        }
        return ReleaseStamp(stamp_path(self.project.store_root, rid), facts, files)

    def stamps_hold(self) -> bool:
        """A plain run, and the stamp of each release it builds holding (a release it
        does not build, such as one never built, has no say)."""
        if not self.roots or not plain_run(sys.argv):
            return False
        wanted = requested(sys.argv, set(self.roots) | set(self.refused))
        if not wanted or wanted - set(self.roots):  # a refused or unknown release
            return False
        return all(self.stamp(rid).holds() for rid in wanted)

    def save_stamps(self, releases: list[str], executed: bool) -> None:
        """After a build with no failure: stamp each built release with no attempt
        waiting for a retry (a pending retry must run on the next build). A no-op that
        took the fast path leaves the stamps as they are."""
        if self.lazy and not executed:
            return
        for rid in releases:
            stamp = self.stamp(rid)
            pending = any(
                c.kind == "attempt" and not _no_retry_pending(str(self.rt.pointer_path(c)))
                for c in walk([self.roots[rid]])
            )
            if pending:
                stamp.drop()
            else:
                stamp.save()

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
            with space_for(self.project.store_root):
                run_cell(self.rt, cell)
        except ReconError as err:
            return CellFailed.of(cell.id, err)
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
            "uptodate": [(not_stale, [str(stale_path(self.project.root, rid))])],
        }

    def _export(self, rid: str, root: Cell) -> TaskFailed | None:
        """Write releases/<id>/ (release JSON, manifest, runs, site), verified and atomic;
        then, for a re-grade, the new manifest version into the lock."""
        try:
            with space_for(self.project.root / "releases"):
                publish(self.rt, rid, root, self.project.root / "releases" / rid)
            if rid in self.regrading:
                self._relock(rid, root)
        except ReconError as err:
            return TaskFailed(f"release:{rid}: {err}")
        return None

    def _relock(self, rid: str, root: Cell) -> None:
        old = lock.load(self.project.root, rid)
        assert old is not None
        digest = self.rt.require_pointer(root).outputs["manifest"].digest
        manifest = Manifest.model_validate(self.rt.store.read_json(digest))
        new = lock.regraded(old, digest, manifest)
        path = lock.write(self.project.root, new)
        sys.stderr.write(
            f"[recon] re-graded release:{rid}: manifest version {old.version} -> {new.version} "
            f"({os.path.relpath(path, self.project.root)}); changed: "
            f"{lock.describe(new.history[-1].changed)}\n"
        )

    def _refused_task(self, rid: str, why: str) -> dict[str, Any]:
        return {
            "basename": "release",
            "name": rid,
            "doc": f"release {rid} is frozen and its inputs changed: refused",
            "actions": [(refuse, [why])],
            "uptodate": [False],
        }


def _no_retry_pending(pointer: str) -> bool:
    """An attempt that ended in a harness failure is retried on the next build."""
    found = load_pointer(Path(pointer))
    return found is not None and not found.retry
