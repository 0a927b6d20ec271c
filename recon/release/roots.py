"""The live roots of the store: pointer files, committed release manifests and runs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recon.errors import StoreError
from recon.store import OutputRef, outputs_refs


@dataclass
class Roots:
    """Cell key (or ``release:<id>``) -> output refs, and the pointer files that are
    unreadable (garbage: not JSON, or not a pointer), which name no root."""

    refs: dict[str, list[OutputRef]] = field(default_factory=dict)
    pointers: dict[Path, str] = field(default_factory=dict)  # readable pointer -> its key
    unreadable: list[Path] = field(default_factory=list)


def live_roots(store_root: Path, releases: Path) -> Roots:
    """Every pointer under the store, every release's manifest and runs."""
    roots = Roots()
    for path in sorted((store_root / "cells").glob("*/*.json")):
        pointer = _read(path)
        try:
            key, refs = pointer["key"], outputs_refs(pointer["outputs"])
        except (KeyError, TypeError, StoreError):
            roots.unreadable.append(path)
            continue
        roots.refs[key] = refs
        roots.pointers[path] = key
    for path in sorted(releases.glob("*/manifest.json")):
        manifest = _read(path)
        for cell in manifest.get("cells", []):
            roots.refs[cell["key"]] = outputs_refs(cell["outputs"])
        roots.refs[f"release:{manifest['release']}"] = [
            OutputRef(manifest["release_json"]),
            OutputRef(manifest["site"], "tree"),
        ]
        runs = _read(path.with_name("runs.json")) if path.with_name("runs.json").is_file() else {}
        for name, digest in runs.get("attempts", {}).items():
            roots.refs.setdefault(f"run:{name}", []).append(OutputRef(digest))
    return roots


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
