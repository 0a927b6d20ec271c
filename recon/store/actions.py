"""The action cache: cell key -> cell record, write-once.

It is the durable record of finished cells: doit's own state DB is written only when
a run ends, so a killed build re-reads finished cells from here instead of re-running them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from recon.store.atomic import write_once
from recon.store.canonical import canonical_json
from recon.store.layout import StoreLayout


class ActionCache:
    def __init__(self, root: Path) -> None:
        self.root = StoreLayout(Path(root)).actions

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The record of ``key``; None when there is none, or it is unreadable (then it is
        removed, so the cell runs again instead of being reused from garbage)."""
        path = self._path(key)
        try:
            record = json.loads(path.read_bytes())
        except FileNotFoundError:
            return None
        except ValueError:
            record = None
        if not isinstance(record, dict):
            self.remove(key)
            return None
        return record

    def has(self, key: str) -> bool:
        return self._path(key).is_file()

    def put(self, key: str, record: dict[str, Any]) -> bool:
        """Record a finished cell; returns False (and keeps the first) if the key exists."""
        path = self._path(key)
        if path.exists():
            return False
        return write_once(path, canonical_json(record))

    def remove(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def iter_keys(self) -> Iterator[str]:
        if not self.root.is_dir():
            return
        for path in sorted(self.root.glob("*/*.json")):
            yield path.stem
