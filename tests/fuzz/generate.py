"""The malformed-input corpus, derived from the project's real cases, entries and releases.

Each mutant takes one real file (``TARGETS``), breaks it in one way and says what the error
line must name. ``python -m tests.fuzz.generate`` writes ``tests/fuzz/corpus/`` (one folder
per class of defect, and ``index.json``); ``tests/fuzz/test_corpus.py`` checks that the
checked-in corpus is exactly what this derives, and runs every file through ``recon
validate --no-render`` and ``doit list``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.fuzz.mutants import ALL

REPO = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"

TARGETS = {
    "case": "cases/html5-boilerplate/case.yaml",
    "contract": "cases/todomvc/public/contract.yaml",
    "grading": "cases/todomvc/sealed/grading.yaml",
    "boilerplate-grading": "cases/html5-boilerplate/sealed/grading.yaml",
    "entry": "entries/scripted-faithful.yaml",
    "docker-entry": "entries/mini-swe-agent-scripted.yaml",
    "release": "releases/demo.yaml",
}


@dataclass(frozen=True)
class Mutant:
    """One malformed file: it replaces ``target``; the error line must name ``file`` and
    contain every string of ``names`` (a field path, or what is wrong with the file)."""

    cls: str
    name: str
    target: str
    file: str
    names: tuple[str, ...]
    data: bytes

    @property
    def path(self) -> str:
        suffix = Path(self.target).suffix
        return f"{self.cls}/{self.name}{suffix}"


class Source:
    """The real files, read once, and ways to break them."""

    def __init__(self, root: Path = REPO) -> None:
        self.root = root
        self._texts: dict[str, str] = {}

    def text(self, key: str) -> str:
        if key not in self._texts:
            self._texts[key] = (self.root / TARGETS[key]).read_text(encoding="utf-8")
        return self._texts[key]

    def data(self, key: str) -> Any:
        return yaml.load(self.text(key), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))

    def edit(self, key: str, change: Callable[[Any], object]) -> bytes:
        """The file's data changed by ``change`` (in place), dumped as YAML."""
        data = self.data(key)
        change(data)
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode("utf-8")


def mutants(source: Source | None = None) -> list[Mutant]:
    """Every mutant, in a fixed order; names are unique within their class."""
    source = source or Source()
    found: list[Mutant] = []
    for cls, make in ALL.items():
        for name, key, file_key, names, data in make(source):
            file = TARGETS.get(file_key, file_key)
            found.append(Mutant(cls, name, TARGETS[key], file, names, data))
    paths = [m.path for m in found]
    if len(set(paths)) != len(paths):
        raise SystemExit(
            f"duplicate mutant names: {sorted(p for p in paths if paths.count(p) > 1)}"
        )
    return found


def index(found: list[Mutant]) -> dict[str, dict[str, Any]]:
    """``index.json``: corpus path -> target, file and names (the data is the file itself)."""
    return {
        m.path: {k: v for k, v in asdict(m).items() if k not in ("data", "cls", "name")}
        | {"class": m.cls}
        for m in found
    }


def index_bytes(found: list[Mutant]) -> bytes:
    return (json.dumps(index(found), indent=1, sort_keys=True) + "\n").encode("utf-8")


def write(out: Path = CORPUS) -> list[Mutant]:
    found = mutants()
    for old in sorted(out.rglob("*"), reverse=True) if out.exists() else []:
        old.unlink() if old.is_file() else old.rmdir()
    for m in found:
        path = out / m.path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(m.data)
    (out / "index.json").write_bytes(index_bytes(found))
    return found


if __name__ == "__main__":
    written = write()
    classes = sorted({m.cls for m in written})
    print(f"{len(written)} malformed files in {len(classes)} classes -> {CORPUS}", file=sys.stderr)
