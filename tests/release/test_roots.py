"""``recon store gc`` keeps withdrawal sidecars and every manifest version a lock names."""

from __future__ import annotations

import json
from pathlib import Path

from recon.model import ReleaseLock, Sidecar, Withdrawals
from recon.release.roots import live_roots
from recon.store import ActionCache, Store, gc
from tests.release.factories import d


def test_sidecars_and_locked_versions_survive_gc(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    releases = tmp_path / "releases"
    releases.mkdir()
    sidecar = Sidecar(
        action="withdraw", release="demo", attempt="p.e.c.0", record=d("r"), reason="x", by="me"
    )
    kept = store.put_json(sidecar.model_dump(mode="json"))
    log = Withdrawals(release="demo", log=[kept])
    (releases / "demo.withdrawals.json").write_text(log.model_dump_json())
    manifest, result = store.put_json({"v": 1}), store.put_json({"r": 1})
    history = [{"version": 1, "manifest": manifest, "release_json": result}]
    lock = ReleaseLock(release="demo", version=1, manifest=manifest, inputs={}, history=history)
    (releases / "demo.lock").write_text(lock.model_dump_json())
    (releases / "other.lock").write_text(json.dumps(["garbage"]))  # names nothing
    garbage = store.put_json({"nobody": "needs this"})

    roots = live_roots(tmp_path / "store", releases)
    report = gc(store, ActionCache(tmp_path / "store"), roots.refs, dry_run=False)
    assert report.removed_objects == [garbage] and not store.path(garbage).exists()
    for digest in (kept, manifest, result):
        assert store.path(digest).is_file(), digest
