"""A doit file checker using blake3, backed by the store's stat cache.

doit calls ``check_modified`` for every file_dep on every run and ``get_state`` after a
task succeeds. Both go through the stat cache, so an unchanged file is never rehashed
and a file touched without a content change is hashed once, then trusted again.
"""

from __future__ import annotations

import os
from typing import Any

from doit.dependency import FileChangedChecker

from recon.store import StatCache


def blake3_checker(stat: StatCache) -> type[FileChangedChecker]:
    """A checker class bound to ``stat`` (doit instantiates the class itself)."""

    class Blake3Checker(FileChangedChecker):
        def check_modified(self, file_path: str, file_stat: os.stat_result, state: Any) -> bool:
            return bool(stat.digest(file_path, file_stat) != state)

        def get_state(self, dep: str, current_state: Any) -> str | None:
            digest = stat.digest(dep)
            return None if digest == current_state else digest

    return Blake3Checker
