"""Publishing a release: ``releases/<id>/`` written beside the old one, then swapped in.

What leaves the store is verified as it is read; a corrupt or missing object is healed
(:func:`recon.pipeline.cells.heal`) and the release's cells are brought back before the
export starts again. A failed export leaves the previous release as it was.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from recon.errors import StoreError
from recon.model import Manifest, RunRecord, Runs
from recon.pipeline.cells import HEAL_ROUNDS, Cell, Runtime, heal, run_cell, walk
from recon.site.data import DATA, data_files
from recon.store import ObjectFault, checkout_tree, replace_dir

FILES = ("release.json", "manifest.json", "runs.json", "site")


def publish(rt: Runtime, rid: str, root: Cell, out: Path) -> None:
    """Export release ``rid`` (its manifest cell is ``root``) to the folder ``out``."""
    for _ in range(HEAL_ROUNDS):
        try:
            _export(rt, rid, root, out)
            return
        except ObjectFault as fault:
            heal(rt, root, fault)
            run_cell(rt, root)
    raise StoreError(
        f"release:{rid}: the store kept failing to yield its outputs after {HEAL_ROUNDS} "
        "repairs; run `recon store verify --repair` and look at the disk"
    )


def _export(rt: Runtime, rid: str, root: Cell, out: Path) -> None:
    store = rt.store
    pointer = rt.read_pointer(root)
    if pointer is None or not rt.cache.has(pointer.key):
        run_cell(rt, root)
        pointer = rt.require_pointer(root)
    manifest = Manifest.model_validate(store.read_json(pointer.outputs["manifest"].digest))
    release = store.read_json(manifest.release_json)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{rid}.staging-", dir=out.parent))
    try:
        records = run_records(rt, root)
        ran = Runs(
            release=rid,
            attempts={name: digest for name, (digest, _) in records.items()},
            wall_s={name: rec.duration_s for name, (_, rec) in records.items()},
        )
        (staging / "release.json").write_bytes(pretty(release))
        (staging / "manifest.json").write_bytes(pretty(manifest.model_dump(mode="json")))
        (staging / "runs.json").write_bytes(pretty(ran.model_dump(mode="json")))
        checkout_tree(store, manifest.site, staging / "site")
        _write_data(staging / "site", manifest, {n: rec for n, (_, rec) in records.items()})
        staging.chmod(0o755)
        replace_dir(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def run_records(rt: Runtime, root: Cell) -> dict[str, tuple[str, RunRecord]]:
    """The run metadata of the release's attempts, from their pointers: attempt -> the
    digest of its last try's RunRecord and the record."""
    found: dict[str, tuple[str, RunRecord]] = {}
    for cell in walk([root]):
        if cell.kind == "attempt":
            pointer = rt.require_pointer(cell)
            if "run" in pointer.outputs:
                digest = pointer.outputs["run"].digest
                found[cell.name] = (digest, RunRecord.model_validate(rt.store.read_json(digest)))
    return found


def _write_data(site: Path, manifest: Manifest, records: dict[str, RunRecord]) -> None:
    """The files of ``site/data/`` (recon.site.data): written by the export, never part of
    the site tree, whose digest the manifest holds."""
    if (site / DATA).exists():
        raise StoreError(f"site tree {manifest.site[:12]}: has a {DATA}/ of its own; rebuild it")
    for rel, data in data_files(manifest, records).items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def pretty(value: Any) -> bytes:
    return (json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()
