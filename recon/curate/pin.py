"""Pinning a reference: per-file blake3, a folder's tree digest, and provenance artifacts.

Pure over ``{relative path: bytes}`` trees (no store, no network), so freezing the same
files twice gives the same digests.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import blake3

from recon.model.provenance import Artifact
from recon.store import canonical_json

Tree = dict[str, bytes]
REFERENCE = "sealed/reference"


def read_tree(folder: Path) -> Tree:
    """Every file under ``folder`` by relative POSIX path (links are followed only when
    they stay inside it)."""
    root = folder.resolve()
    out: Tree = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and root in path.resolve().parents:
            out[path.relative_to(folder).as_posix()] = path.read_bytes()
    return out


def digests(tree: Mapping[str, bytes]) -> dict[str, str]:
    """Relative path -> blake3 hex of its bytes."""
    return {path: blake3.blake3(data).hexdigest() for path, data in sorted(tree.items())}


def tree_integrity(tree: Mapping[str, bytes]) -> str:
    """``blake3:<hex>`` of the canonical listing of paths and digests: a local source's pin."""
    listing = canonical_json(digests(tree))
    return "blake3:" + blake3.blake3(listing).hexdigest()


def artifacts(
    tree: Mapping[str, bytes], source_prefix: str, *, authored: bool = False, how: str = ""
) -> list[Artifact]:
    """One provenance artifact per reference file, sorted by path."""
    return [
        Artifact(
            path=f"{REFERENCE}/{path}",
            source=how or f"{source_prefix}{path}",
            blake3=digest,
            authored=authored,
        )
        for path, digest in digests(tree).items()
    ]


def difference(old: Mapping[str, str], new: Mapping[str, str]) -> tuple[list[str], ...]:
    """(added, changed, removed) paths between two ``{path: digest}`` maps."""
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    changed = sorted(p for p in set(old) & set(new) if old[p] != new[p])
    return added, changed, removed
