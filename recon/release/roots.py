"""The live roots of the store: pointer files and committed release manifests."""

from __future__ import annotations

import json
from pathlib import Path

from recon.store import OutputRef, outputs_refs


def live_roots(store_root: Path, releases: Path) -> dict[str, list[OutputRef]]:
    """Cell key -> output refs, for every pointer under the store and every manifest."""
    roots: dict[str, list[OutputRef]] = {}
    for path in sorted((store_root / "cells").glob("*/*.json")):
        pointer = json.loads(path.read_bytes())
        roots[pointer["key"]] = outputs_refs(pointer["outputs"])
    for path in sorted(releases.glob("*/manifest.json")):
        manifest = json.loads(path.read_bytes())
        for cell in manifest["cells"]:
            roots[cell["key"]] = outputs_refs(cell["outputs"])
        roots[f"release:{manifest['release']}"] = [
            OutputRef(manifest["release_json"]),
            OutputRef(manifest["site"], "tree"),
        ]
    return roots
