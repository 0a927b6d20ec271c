"""The front door of a build: what ``dodo.py`` gets, whichever class answers.

``dodo.py`` calls :func:`recon.pipeline.noop.open_pipeline`, which hands back either the
whole :class:`~recon.pipeline.tasks.Pipeline` or, when nothing moved, a
:class:`~recon.pipeline.noop.NoopPipeline`. Both are a :class:`FrontDoor`: one doit
config, one progress reporter, one way to read doit's variables (:class:`Options`), one
way to mark a failed release stale. They differ only in where their cells come from.

How "up to date" is decided: four layers, each a cheaper check in front of the next
==================================================================================

A build asks the layers top down; the first that can say "nothing to do" ends the
question for everything below it, and a miss (or any doubt) falls through to the next
layer. Only the lowest is needed for correct results; the three above it are shortcuts
over stat keys ``(dev, inode, size, mtime_ns, ctime_ns)``, saved only when no file was
racy (git's racily-clean rule), so a shortcut can be missed but never wrongly taken.

1. **The setup cache** (:mod:`recon.pipeline.setupcache`, ``<store>/state/setup/
   noop.json``) skips *deriving the build*. Deriving it reads every case, entry and
   release definition, parses every ``recon`` module for the code digests, asks chromium
   its version and builds every cell. The cache keeps the no-op plan (each release's
   stamp, its release task, its cells by kind) under the stat key of every file and
   folder the derivation reads, the ``RECON_*`` settings and doit's variables. A hit, on
   a plain run whose stamps hold (layer 2), gives doit the :class:`NoopPipeline`.
2. **The release stamps** (:mod:`recon.pipeline.stamp`, ``<store>/state/stamps/
   <release>.json``) skip *visiting the cells*. A stamp is the stat key of every file a
   release's tasks read or write (each cell's file dependencies and pointer, the
   published files, every project and code file) and the release's facts (cells, code
   digests, re-grade choices). While it holds, each cell kind's task creator is one of
   doit's delayed ones: doit checks the ``release:<id>`` task alone, not its 4 × N cells.
3. **doit's own database** (``.doit.db``) skips *running a task's action*. Per task it
   keeps the blake3 of each file dependency (a stat-cache hit is not hashed again,
   :mod:`recon.pipeline.checker`) and the values of the ``uptodate`` checks: the kind's
   code digest and the cell's parameters, no attempt waiting for a retry, no release
   marked stale.
4. **The action cache** (:mod:`recon.store.actions`, ``<store>/actions/``) skips
   *computing a cell*. When doit runs a cell's action, the cell's key (its kind, code
   digest, input digests and parameters) is looked up; a finished record's outputs are
   reused and only the pointer is written ("reused" in the progress counts). Keys are
   content digests, so this layer is the one that is never wrong: it survives a killed
   build, a lost ``.doit.db``, a moved checkout and a second release sharing the cell.

A change therefore costs what it touches: an edited file misses layers 1 and 2 for the
builds that read it, doit re-runs the tasks whose dependencies moved, and the action
cache runs only the cells whose key moved.
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from doit.exceptions import TaskError

from recon.errors import ReconError
from recon.model import FailedCell
from recon.pipeline.checker import blake3_checker
from recon.pipeline.executor import ExecutorChoice
from recon.pipeline.progress import Tracker
from recon.pipeline.publish import STALE, mark_stale
from recon.pipeline.stamp import stamp_path
from recon.pipeline.view import ProgressReporter, choose_view
from recon.project.loader import Project
from recon.project.settings import Settings
from recon.store import StatCache, StoreGuard

DOIT_VARS = ("regrade", "executor", "address", "progress", "wait_s", "give_up_s")
"""doit's variables a build reads (``doit release:demo executor=ray ...``)."""


@dataclass(frozen=True)
class Options:
    """What a build's doit variables ask for, the settings filling in what they omit."""

    regrade: frozenset[str]
    executor: ExecutorChoice
    view: str

    @classmethod
    def parse(cls, doit_vars: Mapping[str, str | None], settings: Settings) -> Options:
        """``regrade=<id>[,<id>]`` (re-grade frozen releases on purpose),
        ``executor=local|ray``, ``address=<host:port>``, ``wait_s=`` and ``give_up_s=``
        (:mod:`recon.pipeline.executor`), ``progress=auto|plain|rich``."""
        got = {name: doit_vars.get(name) or None for name in DOIT_VARS}
        wanted = {r.strip() for r in (got["regrade"] or "").split(",") if r.strip()}
        choice = ExecutorChoice.from_vars(got["executor"], got["address"], got["wait_s"],
                                          got["give_up_s"], settings)  # fmt: skip
        return cls(frozenset(wanted), choice, choose_view(got["progress"] or settings.progress))


class FrontDoor(ABC):
    """What dodo.py asks of a build: doit's config and the progress reporter. A subclass
    says where its cells come from (:meth:`progress_cells`) and what a finished build
    saves (:meth:`save_stamps`)."""

    project: Project
    stat: StatCache
    tracker: Tracker
    view: str
    rt: Any = None  # the whole pipeline's runtime, if one was opened
    lazy: bool = False  # the cells' task creators are doit's delayed ones
    guard: StoreGuard | None = None  # the build's shared hold on the store

    @abstractmethod
    def default_releases(self) -> list[str]:
        """The releases a bare ``doit`` builds."""

    @abstractmethod
    def progress_cells(self) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        """The cells by id (those the reporter may be told of) and by release."""

    @abstractmethod
    def save_stamps(self, releases: list[str], executed: bool) -> None:
        """After a build with no failure (``executed``: whether any task ran)."""

    def doit_config(self) -> dict[str, Any]:
        return {
            "check_file_uptodate": blake3_checker(self.stat),
            "dep_file": str(self.project.root / ".doit.db"),
            "backend": "sqlite3",
            "default_tasks": [f"release:{rid}" for rid in sorted(self.default_releases())],
            "verbosity": 1,
            "reporter": self.reporter(),
        }

    def reporter(self) -> ProgressReporter:
        """doit's console reporter plus this build's progress (:mod:`recon.pipeline.view`)."""
        cells, releases = self.progress_cells()
        found = ProgressReporter(self.tracker, cells, releases, self.view, self.rt,
                                 on_success=self.save_stamps,
                                 on_failure=self.mark_stale)  # fmt: skip
        found.lazy = lambda: self.lazy
        return found

    def mark_stale(self, failures: dict[str, list[FailedCell]]) -> None:
        """After a build with a failed cell: mark each release it failed as stale."""
        mark_failed(self.project.root, self.project.store_root, failures)


def not_stale(path: str) -> bool:
    """A release marked stale is published again, even when no input of it moved (the
    failed cell was fixed back to what it was)."""
    return not Path(path).exists()


def stale_path(root: Path, rid: str) -> Path:
    return root / "releases" / rid / STALE


def mark_failed(root: Path, store_root: Path, failures: dict[str, list[FailedCell]]) -> None:
    """Mark each release of ``failures`` stale (:func:`recon.pipeline.publish.mark_stale`)
    and drop its stamp, so the next build checks every task. Marking is the last thing a
    failed build does: if it cannot be written, it says so and the build still fails."""
    for rid, failed in sorted(failures.items()):
        stamp_path(store_root, rid).unlink(missing_ok=True)
        try:
            mark_stale(root, rid, failed)
        except (OSError, ReconError) as err:
            sys.stderr.write(f"recon: release:{rid}: could not mark releases/{rid}/ stale: {err}\n")
            continue
        names = ", ".join(f.cell for f in failed[:3]) + (", ..." if len(failed) > 3 else "")
        sys.stderr.write(
            f"[recon] release:{rid}: build failed ({names}); releases/{rid}/ marked stale "
            f"(releases/{rid}/{STALE}, a banner on every page)\n"
        )


def refuse(why: str) -> TaskError:
    """A frozen release's build with changed inputs: bad input, exit 2 (doit's TaskError)."""
    sys.stderr.write(f"recon: {why}\n")
    return TaskError(why)
