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


class ActionCache:
    def __init__(self, root: Path) -> None:
        self.root = Path(root) / "actions"

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            record: dict[str, Any] = json.loads(self._path(key).read_bytes())
        except FileNotFoundError:
            return None
        return record

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
