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
pipeline, which derives the plan again and caches it. Both are a
:class:`~recon.pipeline.door.FrontDoor`, whose docstring says how the four layers that
decide "up to date" (this plan's cache, the stamps, doit's database, the action cache)
stack.
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

from recon.pipeline.door import DOIT_VARS, FrontDoor, Options, not_stale, refuse, stale_path
from recon.pipeline.keys import KIND_MODULES, PACKAGE
from recon.pipeline.progress import Tracker
from recon.pipeline.setupcache import Scan, SetupCache, tree_paths
from recon.pipeline.stamp import ReleaseStamp, plain_run, positional, stamp_path
from recon.project.loader import Project
from recon.project.settings import Settings
from recon.store import StatCache, StoreGuard

if TYPE_CHECKING:
    from recon.pipeline.tasks import Pipeline

__all__ = ["DOIT_VARS", "NoopPipeline", "open_pipeline"]
Creators = dict[str, Callable[[], Iterator[dict[str, Any]]]]


def open_pipeline(
    root: Path, settings: Settings, **doit_vars: str | None
) -> Pipeline | NoopPipeline:
    """dodo.py's pipeline: a :class:`NoopPipeline` when the cached plan and the stamps of
    the releases this run builds hold, else the whole ``Pipeline`` (caching its plan).
    Either holds the store shared (:class:`~recon.store.StoreGuard`) while the build runs,
    so no ``recon store gc`` removes what it writes before its pointers name it."""
    project = Project.open(root, settings)
    guard = StoreGuard(project.store_root)  # held until the build's process ends
    guard.share(lambda: sys.stderr.write(f"[recon] waiting for `recon store gc` to end "
                                         f"({guard.path})\n"))  # fmt: skip
    found = _open(project, doit_vars)
    found.guard = guard
    return found


def _open(project: Project, doit_vars: Mapping[str, str | None]) -> Pipeline | NoopPipeline:
    cache = SetupCache(project.layout.setup_cache, setup_facts(project, doit_vars))
    plan = cache.load()
    if plan is not None:
        quick = NoopPipeline.if_nothing_moved(project, plan, doit_vars)
        if quick is not None:
            return quick
    scan = None if plan is not None else Scan.take(cache.facts, setup_paths(project))
    from recon.pipeline.tasks import Pipeline

    pipeline = Pipeline.open(project, doit_vars)
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
        "environ": _environ(project.settings),
        "vars": {name: doit_vars.get(name) or "" for name in DOIT_VARS},
        "releases": defined,  # definitions, locks, withdrawals (not the output folders)
    }


def _environ(settings: Settings) -> dict[str, str]:
    """The ``RECON_*`` settings and ``DOCKER_HOST``, as the environment held them."""
    found = dict(settings.forwarded)
    if settings.docker_host is not None:
        found["DOCKER_HOST"] = settings.docker_host
    return dict(sorted(found.items()))


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
    chromium = chromium_path(project.settings.chromium)
    found += [chromium, os.path.realpath(chromium)]
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


class NoopPipeline(FrontDoor):
    """The tasks of a project whose cached plan and requested stamps hold."""

    def __init__(self, project: Project, plan: dict[str, Any], doit_vars: Mapping[str, Any]):
        self.project = project
        self.plan = plan
        self.doit_vars = dict(doit_vars)
        options = Options.parse(self.doit_vars, project.settings)
        self.stat = StatCache(project.layout.stat_db)
        self.tracker = Tracker(project.store_root, options.executor.name)
        self.view = options.view
        self.lazy = True  # every cell's task creator is a delayed one
        self._full: Pipeline | None = None

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
            stamps = [ReleaseStamp(stamp_path(project.store_root, rid),
                                   releases[rid]["stamp"]["facts"],
                                   releases[rid]["stamp"]["files"]) for rid in wanted]  # fmt: skip
        except (KeyError, TypeError):
            return None
        return cls(project, plan, doit_vars) if all(s.holds() for s in stamps) else None

    def full(self) -> Pipeline:
        """The whole pipeline, opened the first time a task needs it."""
        if self._full is None:
            from recon.pipeline.tasks import Pipeline

            self._full = Pipeline.open(self.project, self.doit_vars)
        return self._full

    def default_releases(self) -> list[str]:
        return sorted(self.plan["releases"])

    def progress_cells(self) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        releases: dict[str, list[Any]] = {
            rid: [CellRef(kind, name, {"entry": entry}) for kind, name, entry in found["cells"]]
            for rid, found in self.plan["releases"].items()
        }
        return {}, releases

    def save_stamps(self, releases: list[str], executed: bool) -> None:
        """A task ran after all (doit's own state was missing one): stamp as a build does."""
        if executed:
            self.full().save_stamps(releases, executed)

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
                stale = str(stale_path(self.project.root, rid))
                yield {"basename": "release", "name": rid, **found["task"],
                       "actions": [(self._export, [rid])],
                       "uptodate": [(not_stale, [stale])]}  # fmt: skip
            for rid, task in sorted(self.plan["refused"].items()):
                yield {"basename": "release", "name": rid, "doc": task["doc"],
                       "actions": [(refuse, [task["why"]])], "uptodate": [False]}  # fmt: skip

        release.__doc__ = "build a release: every cell, then releases/<id>/"
        creators["task_release"] = release
        return creators

    def _export(self, rid: str) -> Any:
        return self.full().export(rid)
