"""A value derived at task setup, cached under the stat key of everything it was derived from.

Before doit checks anything, ``doit release:<id>`` derives what it derived last time: it
reads the cases, entries and release definitions, parses every ``recon`` module for the
code digests, asks chromium its version and builds every cell. When none of that moved,
the result is the same, so :mod:`recon.pipeline.noop` keeps what a no-op needs of it here:
one JSON file under ``store/state/setup/``, holding

- ``facts``: what the value depends on besides files (Python, platform, the ``RECON_*``
  environment, doit's variables, the release definitions' names), compared for equality;
- ``paths``: every file *and folder* the derivation may read, listed before it started; a
  folder's stat key moves when an entry is added, removed or renamed in it, so a new file
  is seen without walking the trees again;
- ``digest``: blake3 of the facts and the stat key ``(dev, inode, size, mtime_ns,
  ctime_ns)`` of each path, taken *before* the value was derived (a file edited while it
  was derived no longer matches on the next run);
- ``check``: blake3 of the whole record. A file that does not parse, has another schema,
  or whose check fails is ignored, never trusted, and the value is derived again.

A value is saved only when no path was *racy* (modified within ``RACY_NS`` of the stat
pass, git's racily-clean rule, as for :mod:`recon.pipeline.stamp`). Writes are atomic.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import blake3

from recon.store import canonical_json, write_atomic
from recon.store.disk import DiskFull
from recon.store.statcache import RACY_NS

SCHEMA = 1


@dataclass(frozen=True)
class Scan:
    """One stat pass over ``paths`` (sorted), with ``facts``."""

    paths: list[str]
    digest: str
    racy: bool

    @classmethod
    def take(cls, facts: Any, paths: Iterable[str]) -> Scan:
        ordered = sorted(set(paths))
        hasher = blake3.blake3(canonical_json(facts))
        now = time.time_ns()
        racy = False
        for name in ordered:
            try:
                st = os.stat(name)
            except OSError:
                hasher.update(f"{name}\0missing\n".encode())
                continue
            racy = racy or now - max(st.st_mtime_ns, st.st_ctime_ns) < RACY_NS
            hasher.update(f"{name}\0{st.st_dev} {st.st_ino} {st.st_size} "
                          f"{st.st_mtime_ns} {st.st_ctime_ns}\n".encode())  # fmt: skip
        return cls(ordered, hasher.hexdigest(), racy)


def tree_paths(folder: Path) -> list[str]:
    """``folder`` and every file and folder under it (``__pycache__`` left out); a missing
    folder is listed as itself, so creating it moves the key."""
    found = [str(folder)]
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found += [os.path.join(top, d) for d in dirs]
        found += [os.path.join(top, f) for f in sorted(files) if not f.endswith(".pyc")]
    return found


class SetupCache:
    """``path``: the cached value of one derivation, valid while ``facts`` and the stat
    key of its paths hold."""

    def __init__(self, path: Path, facts: Any) -> None:
        self.path = path
        self.facts = facts

    def load(self) -> Any | None:
        """The cached value, or None: missing, corrupt, other facts, or a path moved."""
        try:
            record = json.loads(self.path.read_bytes())
            body = {k: record[k] for k in ("schema", "facts", "paths", "digest", "value")}
            if record["check"] != _check(body) or body["schema"] != SCHEMA:
                return None
            paths = [str(p) for p in body["paths"]]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if body["facts"] != self.facts or Scan.take(self.facts, paths).digest != body["digest"]:
            return None
        return body["value"]

    def save(self, scan: Scan, value: Any) -> bool:
        """Keep ``value``, derived after ``scan`` (False, and nothing kept, when racy)."""
        if scan.racy:
            self.path.unlink(missing_ok=True)
            return False
        body = {"schema": SCHEMA, "facts": self.facts, "paths": scan.paths,
                "digest": scan.digest, "value": value}  # fmt: skip
        try:
            write_atomic(self.path, canonical_json({**body, "check": _check(body)}))
        except DiskFull as err:  # a cache: the next run derives the value again
            sys.stderr.write(f"[recon] setup cache not saved: {err}\n")
            return False
        return True


def _check(body: dict[str, Any]) -> str:
    return blake3.blake3(canonical_json(body)).hexdigest()
