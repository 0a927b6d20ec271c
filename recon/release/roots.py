"""The live roots of the store: pointer files, committed release manifests and runs, the
withdrawal sidecars of every release and every manifest version a lock names."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recon.errors import StoreError
from recon.store import OutputRef, StoreLayout, outputs_refs


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
    for path in sorted(StoreLayout(store_root).cells.glob("*/*.json")):
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
    for path in sorted(releases.glob("*.withdrawals.json")):
        sidecars = _field(_read(path), "log")
        roots.refs[f"withdrawals:{path.name}"] = [OutputRef(d) for d in sidecars if _digest(d)]
    for path in sorted(releases.glob("*.lock")):
        versions = [v for v in _field(_read(path), "history") if isinstance(v, dict)]
        roots.refs[f"lock:{path.name}"] = [
            OutputRef(v[k])
            for v in versions
            for k in ("manifest", "release_json")
            if _digest(v.get(k))
        ]
    return roots


def _field(data: Any, name: str) -> list[Any]:
    found = data.get(name) if isinstance(data, dict) else None
    return found if isinstance(found, list) else []


def _digest(value: Any) -> bool:
    return isinstance(value, str) and len(value) == 64


def _read(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
