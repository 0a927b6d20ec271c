"""What the export writes into the published site beside the pages: ``data/``.

Two things a page shows cannot be part of the site cell's output. The manifest holds the
site's digest, so the site cannot hold the manifest; and run metadata (wall time, the
logs' digest) differs between two builds of the same inputs, so no cell may hold it
(DESIGN §4, "key on content"). The export writes them into ``site/data/`` after the site
tree is checked out, as scripts the pages load with ``<script src>`` (which works opened
from disk, where ``fetch`` does not), and the public manifest as JSON for download.

The manifest as published here withholds the outputs of the cells that read sealed
material (:data:`WITHHELD`: the oracle's captures of the sealed reference, probe results,
grade tables); their keys, and every other digest, are shown.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from recon.model.kinds import WITHHELD
from recon.model.records import Manifest, RunRecord

DATA = "data"


def public_manifest(manifest: Manifest) -> dict[str, Any]:
    """The manifest with the outputs of :data:`WITHHELD` kinds replaced by ``None``."""
    flat = manifest.inputs.flat()
    kinds: list[str] = []
    cells = []
    for cell in manifest.cells:
        if cell.kind not in kinds:
            kinds.append(cell.kind)
        hidden = cell.kind in WITHHELD
        outputs = {slot: None if hidden else ref.digest for slot, ref in cell.outputs.items()}
        cells.append({"kind": cell.kind, "name": cell.name, "key": cell.key, "outputs": outputs})
    return {
        "release": manifest.release,
        "version": manifest.version,
        "schema_version": manifest.schema_version,
        "release_json": manifest.release_json,
        "site": manifest.site,
        "toolchain": sorted(manifest.inputs.toolchain.items()),
        "inputs": [[k, v] for k, v in flat.items() if not k.startswith("toolchain.")],
        "kinds": kinds,
        "cells": cells,
        "withheld": list(WITHHELD),
    }


def public_runs(release: str, records: Mapping[str, RunRecord]) -> dict[str, Any]:
    """Each attempt's last-try wall time (whole milliseconds: a timing is never printed in
    a form a sealed weight takes) and the digest of its logs."""
    return {
        "release": release,
        "attempts": {
            attempt: {"wall_ms": round(rec.duration_s * 1000), "logs": rec.logs}
            for attempt, rec in sorted(records.items())
        },
    }


def _script(name: str, value: Any) -> bytes:
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, indent=1)
    return f"window.{name} = {text};\n".encode()


def data_files(manifest: Manifest, records: Mapping[str, RunRecord]) -> dict[str, bytes]:
    """``data/manifest.js``, ``data/manifest-public.json`` and ``data/runs.js``."""
    shown = public_manifest(manifest)
    text = json.dumps(shown, sort_keys=True, ensure_ascii=False, indent=2) + "\n"
    return {
        f"{DATA}/manifest.js": _script("RECON_MANIFEST", shown),
        f"{DATA}/manifest-public.json": text.encode("utf-8"),
        f"{DATA}/runs.js": _script("RECON_RUNS", public_runs(manifest.release, records)),
    }
