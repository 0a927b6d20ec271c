"""The release-level no-op check: one stat pass over every file a release's tasks read or
write, against the stamp its last complete build left.

A stamp is the blake3 digest of the release's *facts* (every cell's kind, name, code digest
and parameters, the list of files: what decides each task's identity) and of the stat key
``(dev, inode, size, mtime_ns, ctime_ns)`` of each file: every cell's file
dependencies, every cell's pointer, the release's published files. It is written only
when a build of the release ended with no failure, no attempt waiting for a retry, and no
file *racy* (modified within ``RACY_NS`` of the stamp: it could change again within the
same timestamp tick without its stat key changing, git's racily-clean rule). The next
build after a cold one therefore checks every task the slow way once, and stamps.

When the stamp still holds, ``doit release:<id>`` has nothing to do: the release task is
up to date without doit visiting its 4 × N cells (each still a doit task, listed by
``doit list``, shown by ``doit info`` and run by name as before). Any change of any
file's stat key, of the code or of the DAG falls back to doit's own per-task checks.
Only plain runs take the fast path: not ``-a``/``--always-execute`` nor another doit
command (:func:`plain_run`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

from recon.pipeline.setupcache import Scan
from recon.store import StoreLayout, canonical_json, write_atomic
from recon.store.disk import DiskFull

DOIT_COMMANDS = frozenset({"list", "info", "forget", "clean", "ignore", "dumpdb", "strace",
                           "tabcompletion", "help", "auto", "reset-dep"})  # fmt: skip
ALWAYS = frozenset({"-a", "--always-execute", "--always"})


# doit's options that take a value as the next argument (``doit help run``).
VALUED = frozenset({"-v", "-r", "-o", "-n", "-P", "-f", "-d", "--verbosity", "--reporter",
                    "--output-file", "--process", "--parallel-type", "--failure-verbosity",
                    "--db-file", "--backend", "--check_file_uptodate", "--file",
                    "--dir"})  # fmt: skip


def positional(argv: Sequence[str]) -> list[str]:
    """doit's command line without its options (nor their values) and variables."""
    found: list[str] = []
    args = iter(argv[1:])
    for arg in args:
        if arg in VALUED:
            next(args, None)
        elif not arg.startswith("-") and "=" not in arg:
            found.append(arg)
    return found


def plain_run(argv: Sequence[str]) -> bool:
    """Whether doit's command line is a plain ``run`` (the default command)."""
    if ALWAYS & set(argv[1:]):
        return False
    named = positional(argv)
    return not named or named[0] not in DOIT_COMMANDS


def requested(argv: Sequence[str], releases: Collection[str]) -> set[str]:
    """The releases a plain run builds: those named ``release:<id>``; every release when
    no task is named (doit's default tasks), ``release`` is, or a cell is (its release
    is not known here)."""
    named = [a for a in positional(argv) if a != "run"]
    ids = {a.removeprefix("release:") for a in named if a.startswith("release:")}
    if not named or len(ids) < len(named):
        return set(releases)
    return ids


def stamp_path(store_root: Path, release: str) -> Path:
    return StoreLayout(store_root).stamp(release)


class ReleaseStamp:
    """The stamp of one release: ``store/state/stamps/<release>.json``."""

    def __init__(self, path: Path, facts: Any, files: Iterable[str]) -> None:
        self.path = path
        self.facts = facts
        self.files = sorted(set(files))
        self._current: tuple[str, bool] | None = None

    def current(self) -> tuple[str, bool]:
        """The digest of the facts and every file's stat key, and whether any file is racy."""
        if self._current is None:
            scan = Scan.take(self.facts, self.files)
            self._current = (scan.digest, scan.racy)
        return self._current

    def saved(self) -> str | None:
        try:
            found = json.loads(self.path.read_bytes())
            return str(found["digest"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def holds(self) -> bool:
        """The saved stamp equals the current one (a racy one never holds)."""
        digest, racy = self.current()
        return not racy and self.saved() == digest

    def save(self) -> bool:
        """Stamp the release as built (False, and the old stamp removed, when racy)."""
        self._current = None  # the build changed files: stat them again
        digest, racy = self.current()
        if racy:
            self.path.unlink(missing_ok=True)
            return False
        data = canonical_json({"digest": digest, "files": len(self.files)})
        try:
            write_atomic(self.path, data)
        except DiskFull as err:  # no stamp: the next build checks every task
            self.path.unlink(missing_ok=True)
            sys.stderr.write(f"[recon] stamp {self.path.name} not saved: {err}\n")
            return False
        return True

    def drop(self) -> None:
        self.path.unlink(missing_ok=True)


def project_files(root: Path, sealed: Path | None, chromium: str | None) -> list[str]:
    """Every definition and code file of the project: release definitions, locks and
    withdrawal logs, cases, entries, the recon package, sealed material kept outside the
    repository, and the chromium executable."""
    from recon.render.browser import chromium_path

    found = [str(p) for p in sorted((root / "releases").glob("*")) if p.is_file()]
    folders = [root / "cases", root / "entries", Path(__file__).resolve().parent.parent]
    folders += [sealed] if sealed is not None else []
    for folder in folders:
        found += [str(p) for p in sorted(folder.rglob("*"))
                  if p.is_file() and "__pycache__" not in p.parts]  # fmt: skip
    found.append(chromium_path(chromium))
    return found
