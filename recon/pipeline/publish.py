"""Publishing a release: ``releases/<id>/`` written beside the old one, then swapped in.

What leaves the store is verified as it is read; a corrupt or missing object is healed
(:func:`recon.pipeline.cells.heal`) and the release's cells are brought back before the
export starts again. A failed export leaves the previous release as it was.

A build of the release that ends with a failed cell marks what is published as stale
(:func:`mark_stale`): ``releases/<id>/stale.json`` names the failed cells, and every page
of the old site carries a banner saying its numbers are not current, naming them. The
folder is swapped in whole, as a publish is; the next successful publish replaces it
without either. Staging folders a killed build left behind are removed by the next one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recon.errors import StoreError
from recon.model import (
    CellLosses,
    FailedCell,
    Manifest,
    ReleaseResult,
    RunRecord,
    Runs,
    RunTrace,
    StaleMark,
)
from recon.pipeline.cells import HEAL_ROUNDS, heal, run_cell
from recon.pipeline.runtime import Cell, Runtime, walk
from recon.release.stale import NAME as STALE
from recon.site.data import DATA, data_files
from recon.site.stale import mark_page
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
    staging = _staging(rid, out)
    try:
        records = run_records(rt, root)
        ran = Runs(
            release=rid,
            attempts={name: digest for name, (digest, _) in records.items()},
            wall_s={name: rec.duration_s for name, (_, rec) in records.items()},
            traces=run_traces(ReleaseResult.model_validate(release)),
            losses={
                kind: CellLosses(lost=lost, resubmitted=again)
                for kind, (lost, again) in rt.progress.losses(rid).items()
            },
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


def run_traces(result: ReleaseResult) -> dict[str, RunTrace]:
    """Each attempt's trace counts as the release JSON publishes them (the gateway's, for an
    attempt through the model gateway, with the agent's own report where it made one)."""
    return {
        a.id: RunTrace(
            source="agent" if a.model_use is None else "gateway",
            counts=a.trace,
            agent=a.agent_trace,
        )
        for a in sorted(result.attempts, key=lambda a: a.id)
    }


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


def _staging(rid: str, out: Path) -> Path:
    """A new staging folder beside ``out``, named with this process's id, after removing
    the ones of builds that are gone (killed while they published)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    clear_leftovers(out.parent, rid)
    return Path(tempfile.mkdtemp(prefix=f".{rid}.staging-{os.getpid()}-", dir=out.parent))


def clear_leftovers(folder: Path, rid: str) -> list[Path]:
    """Remove the staging and set-aside folders of release ``rid`` whose process is gone."""
    removed: list[Path] = []
    leftover = re.compile(rf"^\.{re.escape(rid)}\.(?:staging|old)-(?P<pid>[0-9]+)(?:-|$)")
    for path in sorted(folder.glob(f".{rid}.*")):
        found = leftover.match(path.name)
        if found and path.is_dir() and not _alive(int(found["pid"])):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def mark_stale(root: Path, rid: str, failed: list[FailedCell]) -> StaleMark:
    """Mark ``releases/<rid>/`` as stale: ``stale.json`` and a banner on every page of its
    site naming the failed cells, swapped in whole (the release JSON, manifest and runs
    stay as they were)."""
    out = root / "releases" / rid
    at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    mark = StaleMark(release=rid, at=at, failed=failed, commit=_commit(root))
    staging = _staging(rid, out)
    try:
        if out.is_dir():
            shutil.copytree(out, staging, symlinks=True, dirs_exist_ok=True)
            (staging / STALE).unlink(missing_ok=True)
        for page in sorted((staging / "site").rglob("*.html")):
            data = mark_page(page.read_bytes(), mark)
            page.unlink()
            page.write_bytes(data)
        (staging / STALE).write_bytes(pretty(mark.model_dump(mode="json")))
        staging.chmod(0o755)
        replace_dir(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return mark


def _commit(root: Path) -> str | None:
    """The project's git commit, when it is a git checkout (else None)."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True,
                              text=True, timeout=10, check=False)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    found = done.stdout.strip()
    return found if done.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", found) else None
