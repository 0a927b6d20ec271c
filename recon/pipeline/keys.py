"""Cell keys and per-kind code digests.

A cell's key is blake3 of the canonical JSON of its kind, the digest of the code that
implements that kind, the digests of its inputs, and its parameters.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recon.store import StatCache, digest_json

PACKAGE = Path(__file__).resolve().parent.parent

# The code each cell kind runs, relative to the recon package. Attempts carry no harness
# code: no harness change ever re-keys an attempt (DESIGN §4); their format version does.
CODE_PATHS: dict[str, tuple[str, ...]] = {
    "evidence": ("curate",),
    "workspace": ("curate",),
    "image": ("sandbox/image.py", "sandbox/rootfs.py"),
    "attempt": (),
    "oracle": ("render",),
    "capture": ("render",),
    "probe": ("render", "grade/workflow.py"),
    "grade": ("grade",),
    "aggregate": ("release/aggregate.py",),
    "site": ("site",),
    "manifest": ("release/manifest.py",),
}

# Bump to re-key a kind on purpose (for example a change of record format).
CELL_FORMAT: dict[str, int] = {kind: 1 for kind in CODE_PATHS}


def code_files(kind: str, package: Path = PACKAGE) -> list[Path]:
    files: list[Path] = []
    for rel in CODE_PATHS[kind]:
        path = package / rel
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return files


def code_digest(kind: str, stat_cache: StatCache, package: Path = PACKAGE) -> str:
    """Digest of the source files implementing ``kind`` (and its format version)."""
    listing = {
        path.relative_to(package).as_posix(): stat_cache.digest(path)
        for path in code_files(kind, package)
    }
    return digest_json({"files": listing, "format": CELL_FORMAT[kind]})


def cell_key(kind: str, code: str, inputs: dict[str, str], params: dict[str, Any]) -> str:
    return digest_json({"kind": kind, "code": code, "inputs": inputs, "params": params})
