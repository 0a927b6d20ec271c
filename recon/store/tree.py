"""Directory trees as canonical-JSON tree objects, so a tree digest is a Merkle root.

A tree object is ``{"entries": [{"name", "type", "mode", "size", "digest"}, ...], "tree": 1}``
with entries sorted by name; ``type`` is ``blob`` or ``tree`` (a sub-tree object).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recon.errors import StoreError
from recon.store.objects import ObjectFault, Store

TREE_FORMAT = 1


class TreeRefused(StoreError):
    """A folder holds what a tree cannot: a name that is not UTF-8, a link, a device."""

    def __init__(self, path: Path, why: str) -> None:
        self.path = path
        self.why = why
        super().__init__(f"{_printable(path)}: {why}; refused")


def _printable(path: Path) -> str:
    return os.fsencode(path).decode("utf-8", "backslashreplace")


@dataclass(frozen=True)
class TreeFile:
    """One file reached by walking a tree."""

    path: str
    digest: str
    mode: int
    size: int


def put_tree(store: Store, folder: Path) -> str:
    """Store every file under ``folder`` and return the root tree digest.

    Names that are not UTF-8, symlinks, devices and other non-regular files are refused
    with the path named (``TreeRefused``).
    """
    entries: list[dict[str, Any]] = []
    with os.scandir(folder) as scan:
        items = sorted(scan, key=lambda e: e.name)
    for item in items:
        info = item.stat(follow_symlinks=False)
        path = Path(item.path)
        try:
            item.name.encode("utf-8")
        except UnicodeEncodeError:
            raise TreeRefused(path, "name is not valid UTF-8") from None
        if stat.S_ISDIR(info.st_mode):
            sub = put_tree(store, path)
            size = tree_size(store, sub)
            entries.append(_entry(item.name, "tree", 0o755, size, sub))
        elif stat.S_ISREG(info.st_mode):
            digest = store.put_file(path)
            mode = 0o755 if info.st_mode & 0o111 else 0o644
            entries.append(_entry(item.name, "blob", mode, info.st_size, digest))
        else:
            raise TreeRefused(path, "not a regular file or folder (symlink or device)")
    return put_tree_entries(store, entries)


def put_tree_entries(store: Store, entries: list[dict[str, Any]]) -> str:
    """Store a tree object from already-stored entries."""
    ordered = sorted(entries, key=lambda e: e["name"])
    names = [e["name"] for e in ordered]
    if len(set(names)) != len(names):
        raise StoreError(f"duplicate names in tree: {names}")
    return store.put_json({"entries": ordered, "tree": TREE_FORMAT})


def put_files(store: Store, files: dict[str, bytes]) -> str:
    """Store a tree given as ``{"a/b.txt": bytes}``."""
    nested: dict[str, Any] = {}
    for rel, data in files.items():
        parts = rel.strip("/").split("/")
        if any(part in ("", ".", "..") for part in parts):
            raise StoreError(f"{rel!r}: not a plain relative path; refused")
        node = nested
        for depth, part in enumerate(parts[:-1], 1):
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise StoreError(f"{rel}: {'/'.join(parts[:depth])} is both a file and a folder")
        if isinstance(node.get(parts[-1]), dict):
            raise StoreError(f"{rel} is both a file and a folder")
        node[parts[-1]] = data
    return _put_nested(store, nested)


def _put_nested(store: Store, nested: dict[str, Any]) -> str:
    entries = []
    for name, value in nested.items():
        if isinstance(value, dict):
            sub = _put_nested(store, value)
            entries.append(_entry(name, "tree", 0o755, tree_size(store, sub), sub))
        else:
            entries.append(_entry(name, "blob", 0o644, len(value), store.put_bytes(value)))
    return put_tree_entries(store, entries)


def _entry(name: str, kind: str, mode: int, size: int, digest: str) -> dict[str, Any]:
    return {"name": name, "type": kind, "mode": mode, "size": size, "digest": digest}


def read_tree(store: Store, digest: str) -> list[dict[str, Any]]:
    """The entries of one tree object."""
    try:
        value = store.read_json(digest)
    except ObjectFault:
        raise
    except StoreError:  # not JSON: a blob where a tree was expected
        value = None
    if (
        not isinstance(value, dict)
        or value.get("tree") != TREE_FORMAT
        or not isinstance(value.get("entries"), list)
    ):
        raise StoreError(f"store object {digest} is not a tree object")
    entries: list[dict[str, Any]] = value["entries"]
    return entries


def tree_size(store: Store, digest: str) -> int:
    return sum(int(e["size"]) for e in read_tree(store, digest))


def walk_tree(store: Store, digest: str, prefix: str = "") -> Iterator[TreeFile]:
    """Every file of a tree, depth first, in name order."""
    for entry in read_tree(store, digest):
        path = f"{prefix}{entry['name']}"
        if entry["type"] == "tree":
            yield from walk_tree(store, entry["digest"], path + "/")
        else:
            yield TreeFile(path, entry["digest"], entry["mode"], entry["size"])


def tree_files(store: Store, digest: str) -> dict[str, TreeFile]:
    return {f.path: f for f in walk_tree(store, digest)}


def tree_objects(store: Store, digest: str) -> Iterator[str]:
    """Every object digest a tree reaches, itself included."""
    yield digest
    for entry in read_tree(store, digest):
        if entry["type"] == "tree":
            yield from tree_objects(store, entry["digest"])
        else:
            yield entry["digest"]


def checkout_tree(store: Store, digest: str, dest: Path) -> None:
    """Write a tree's files and folders (empty ones too) under ``dest``, with their modes."""
    dest.mkdir(parents=True, exist_ok=True)
    for entry in read_tree(store, digest):
        target = dest / entry["name"]
        if entry["type"] == "tree":
            checkout_tree(store, entry["digest"], target)
        else:
            store.copy_out(entry["digest"], target, mode=entry["mode"])


def tree_reader(store: Store, digest: str) -> Callable[[str], bytes | None]:
    """A ``read(relative_path)`` function over a stored tree, for the renderer."""
    files = tree_files(store, digest)

    def read(rel: str) -> bytes | None:
        found = files.get(rel.lstrip("/"))
        return None if found is None else store.read_bytes(found.digest)

    return read
