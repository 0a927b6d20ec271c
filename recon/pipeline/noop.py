"""What dodo.py opens: the whole :class:`~recon.pipeline.tasks.Pipeline`, or, when nothing
moved, a :class:`NoopPipeline` that gives doit the same tasks without deriving them.

A no-op ``doit release:<id>`` used to spend most of its time in task setup (reading the
project, parsing every ``recon`` module for the code digests, asking chromium its version,
building every cell) only to find, with the release's stamp (:mod:`recon.pipeline.stamp`),
that nothing changed. The *no-op plan* is what that check needs of the setup: each
release's stamp (its facts and files), its ``release:<id>`` task (file dependencies and
targets) and its cells by kind (for the progress counts). It is cached under the stat key
of every file and folder the setup reads (:mod:`recon.pipeline.setupcache`).

On a plain run that builds only ``release:<id>`` tasks, when the plan's stat key and every
requested release's stamp hold, dodo.py gets the :class:`NoopPipeline`: the same
``release:<id>`` tasks (their action opens the whole pipeline if doit runs one), and one
delayed task creator per cell kind, as the stamped path of ``Pipeline`` has: every cell
stays a doit task, created (by the whole pipeline) only if something asks for it.
Anything else (a miss, a cell named on the command line, ``doit list``) opens the whole
pipeline, which derives the plan again and caches it.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from doit import create_after

from recon.pipeline.checker import blake3_checker
from recon.pipeline.executor import ExecutorChoice
from recon.pipeline.keys import KIND_MODULES, PACKAGE
from recon.pipeline.progress import Tracker
from recon.pipeline.setupcache import Scan, SetupCache, tree_paths
from recon.pipeline.stamp import ReleaseStamp, plain_run, positional, stamp_path
from recon.pipeline.view import ProgressReporter, choose_view
from recon.project.loader import Project
from recon.store import StatCache, StoreGuard

if TYPE_CHECKING:
    from recon.pipeline.tasks import Pipeline

DOIT_VARS = ("regrade", "executor", "address", "progress", "wait_s", "give_up_s")
Creators = dict[str, Callable[[], Iterator[dict[str, Any]]]]


def open_pipeline(root: Path, **doit_vars: str | None) -> Pipeline | NoopPipeline:
    """dodo.py's pipeline: a :class:`NoopPipeline` when the cached plan and the stamps of
    the releases this run builds hold, else the whole ``Pipeline`` (caching its plan).
    Either holds the store shared (:class:`~recon.store.StoreGuard`) while the build runs,
    so no ``recon store gc`` removes what it writes before its pointers name it."""
    project = Project.open(root)
    guard = StoreGuard(project.store_root)  # held until the build's process ends
    guard.share(lambda: sys.stderr.write(f"[recon] waiting for `recon store gc` to end "
                                         f"({guard.path})\n"))  # fmt: skip
    found = _open(project, root, doit_vars)
    found.guard = guard
    return found


def _open(
    project: Project, root: Path, doit_vars: Mapping[str, str | None]
) -> Pipeline | NoopPipeline:
    cache = SetupCache(project.store_root / "state" / "setup" / "noop.json",
                       setup_facts(project, doit_vars))  # fmt: skip
    plan = cache.load()
    if plan is not None:
        quick = NoopPipeline.if_nothing_moved(project, plan, doit_vars)
        if quick is not None:
            return quick
    scan = None if plan is not None else Scan.take(cache.facts, setup_paths(project))
    from recon.pipeline.tasks import Pipeline

    pipeline = Pipeline.open(root, **doit_vars)
    if scan is not None:
        cache.save(scan, noop_plan(pipeline))
    return pipeline


def setup_facts(project: Project, doit_vars: Mapping[str, str | None]) -> dict[str, Any]:
    """What the setup depends on besides the files of :func:`setup_paths`."""
    releases = project.root / "releases"
    try:
        defined = sorted(e.name for e in os.scandir(releases) if e.is_file())
    except OSError:
        defined = []
    return {
        "root": str(project.root),
        "package": str(PACKAGE),
        "store": str(project.store_root),
        "python": [sys.version, sys.executable, os.uname().machine],
        "environ": {k: v for k, v in sorted(os.environ.items()) if _environ(k)},
        "vars": {name: doit_vars.get(name) or "" for name in DOIT_VARS},
        "releases": defined,  # definitions, locks, withdrawals (not the output folders)
    }


def _environ(name: str) -> bool:
    return name.startswith("RECON_") or name == "DOCKER_HOST"


def setup_paths(project: Project) -> list[str]:
    """Every file and folder the setup may read: cases, entries, the ``recon`` package,
    sealed material kept elsewhere, calibrations and the files directly in releases/;
    chromium's executable (a browser upgrade writes a new one); the folders third-party
    distributions are installed in (installing or removing one changes them)."""
    from recon.render.browser import chromium_path

    found = [str(p) for p in sorted((project.root / "releases").glob("*")) if p.is_file()]
    folders = [project.root / "cases", project.root / "entries", PACKAGE,
               project.root / "releases" / "calibrations"]  # fmt: skip
    folders += [project.sealed_root] if project.sealed_root is not None else []
    for folder in folders:
        found += tree_paths(folder)
    found += [chromium_path(), os.path.realpath(chromium_path())]
    found += sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    return found


def noop_plan(pipeline: Pipeline) -> dict[str, Any]:
    """What a no-op needs of the setup (see the module docstring)."""
    releases: dict[str, Any] = {}
    for rid in sorted(pipeline.roots):
        stamp = pipeline.stamp(rid)
        task = pipeline.release_task(rid)
        releases[rid] = {
            "stamp": {"facts": stamp.facts, "files": stamp.files},
            "task": {k: task[k] for k in ("doc", "file_dep", "targets")},
            "cells": [[c.kind, c.name, c.params.get("entry")] for c in pipeline.cells(rid)],
        }
    refused = {rid: {"why": why, "doc": pipeline.refused_task(rid)["doc"]}
               for rid, why in sorted(pipeline.refused.items())}  # fmt: skip
    return {"releases": releases, "refused": refused}


@dataclass(frozen=True)
class CellRef:
    """A cell as the progress counts see it (kind, id, and an attempt's entry)."""

    kind: str
    name: str
    params: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.name}"


class NoopPipeline:
    """The tasks of a project whose cached plan and requested stamps hold."""

    def __init__(self, project: Project, plan: dict[str, Any], doit_vars: Mapping[str, Any]):
        self.project = project
        self.plan = plan
        self.doit_vars = dict(doit_vars)
        self.stat = StatCache(project.store_root / "state" / "stat.sqlite")
        self._full: Pipeline | None = None
        self.guard: StoreGuard | None = None  # the build's shared hold on the store

    @classmethod
    def if_nothing_moved(
        cls, project: Project, plan: Any, doit_vars: Mapping[str, Any]
    ) -> NoopPipeline | None:
        """A plain run naming only ``release:<id>`` tasks (or none) whose releases' stamps
        all hold; else None."""
        try:
            releases = plan["releases"]
            named = [a for a in positional(sys.argv) if a != "run"]
            if not plain_run(sys.argv) or any(not a.startswith("release:") for a in named):
                return None
            wanted = {a.removeprefix("release:") for a in named} or set(releases)
            if not wanted or wanted - set(releases):
                return None
            stamps = [ReleaseStamp(_stamp_path(project, rid), releases[rid]["stamp"]["facts"],
                                   releases[rid]["stamp"]["files"]) for rid in wanted]  # fmt: skip
        except (KeyError, TypeError):
            return None
        return cls(project, plan, doit_vars) if all(s.holds() for s in stamps) else None

    def full(self) -> Pipeline:
        """The whole pipeline, opened the first time a task needs it."""
        if self._full is None:
            from recon.pipeline.tasks import Pipeline

            self._full = Pipeline.open(self.project.root, **self.doit_vars)
        return self._full

    def doit_config(self) -> dict[str, Any]:
        return {
            "check_file_uptodate": blake3_checker(self.stat),
            "dep_file": str(self.project.root / ".doit.db"),
            "backend": "sqlite3",
            "default_tasks": [f"release:{rid}" for rid in sorted(self.plan["releases"])],
            "verbosity": 1,
            "reporter": self.reporter(),
        }

    def reporter(self) -> ProgressReporter:
        found = self.doit_vars
        choice = ExecutorChoice.from_vars(found.get("executor"), found.get("address"),
                                          found.get("wait_s"), found.get("give_up_s"))  # fmt: skip
        view = choose_view(self.doit_vars.get("progress") or os.environ.get("RECON_PROGRESS"))
        releases = {
            rid: [CellRef(kind, name, {"entry": entry}) for kind, name, entry in found["cells"]]
            for rid, found in self.plan["releases"].items()
        }
        tracker = Tracker(self.project.store_root, choice.name)
        found = ProgressReporter(tracker, {}, releases, view, None, on_success=self._built,
                                 on_failure=self._failed)  # fmt: skip
        found.lazy = lambda: True
        return found

    def _built(self, releases: list[str], executed: bool) -> None:
        """A task ran after all (doit's own state was missing one): stamp as a build does."""
        if executed:
            self.full().save_stamps(releases, executed)

    def _failed(self, failures: dict[str, Any]) -> None:
        from recon.pipeline.tasks import mark_failed

        mark_failed(self.project.root, self.project.store_root, failures)

    def task_creators(self) -> Creators:
        """``task_release`` from the plan; each kind's cells from the whole pipeline, in a
        delayed creator that doit calls only if a cell is asked for."""
        creators: Creators = {}
        for kind in KIND_MODULES:

            def create(kind: str = kind) -> Iterator[dict[str, Any]]:
                yield from self.full().kind_tasks(kind)

            create.__doc__ = f"{kind} cells"
            creators[f"task_{kind}"] = create_after()(create)

        def release() -> Iterator[dict[str, Any]]:
            for rid, found in sorted(self.plan["releases"].items()):
                yield {"basename": "release", "name": rid, **found["task"],
                       "actions": [(self._export, [rid])],
                       "uptodate": [(_not_stale, [str(self._stale(rid))])]}  # fmt: skip
            for rid, task in sorted(self.plan["refused"].items()):
                yield {"basename": "release", "name": rid, "doc": task["doc"],
                       "actions": [(_refuse, [task["why"]])], "uptodate": [False]}  # fmt: skip

        release.__doc__ = "build a release: every cell, then releases/<id>/"
        creators["task_release"] = release
        return creators

    def _stale(self, rid: str) -> Path:
        return self.project.root / "releases" / rid / "stale.json"

    def _export(self, rid: str) -> Any:
        return self.full().export(rid)


def _not_stale(path: str) -> bool:
    return not os.path.exists(path)


def _refuse(why: str) -> Any:
    from recon.pipeline.tasks import _refuse as refuse

    return refuse(why)


def _stamp_path(project: Project, rid: str) -> Path:
    return stamp_path(project.store_root, rid)
