"""A doit file checker using blake3, backed by the store's stat cache.

doit calls ``check_modified`` for every file_dep on every run and ``get_state`` after a
task succeeds. The saved state is ``[digest, dev, ino, size, mtime_ns, ctime_ns, racy]``:
when the file's stat still equals the saved one (and it was not racy when saved) the file
is unchanged without any lookup; otherwise the digest decides, through the stat cache, so
a file touched without a content change is hashed once and then trusted again.
"""

from __future__ import annotations

import os
from typing import Any

from doit.dependency import FileChangedChecker

from recon.store.statcache import StatCache, stat_key


def blake3_checker(stat: StatCache) -> type[FileChangedChecker]:
    """A checker class bound to ``stat`` (doit instantiates the class itself)."""

    class Blake3Checker(FileChangedChecker):
        def check_modified(self, file_path: str, file_stat: os.stat_result, state: Any) -> bool:
            if len(state) == 7 and not state[6] and tuple(state[1:6]) == stat_key(file_stat):
                return False
            return bool(stat.digest(file_path, file_stat) != state[0])

        def get_state(self, dep: str, current_state: Any) -> list[Any] | None:
            key, digest, racy = stat.entry(dep)
            state = [digest, *key, racy]
            return None if state == current_state else state

    return Blake3Checker
