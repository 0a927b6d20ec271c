"""`recon store verify` and `recon store gc` on small hand-built stores."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import blake3
import pytest

from recon.errors import StoreError
from recon.store import (
    ActionCache,
    OutputRef,
    Store,
    gc,
    outputs_refs,
    put_files,
    reachable,
    read_tree,
    verify,
)
from recon.store.tree import tree_objects


def key(name: str) -> str:
    return blake3.blake3(name.encode()).hexdigest()


def record(**outputs: OutputRef) -> dict[str, object]:
    return {
        "kind": "test",
        "outputs": {name: {"digest": r.digest, "type": r.type} for name, r in outputs.items()},
    }


def corrupt(store: Store, digest: str, data: bytes = b"bit rot") -> None:
    path = store.path(digest)
    path.chmod(0o644)
    path.write_bytes(data)
    path.chmod(0o444)


@dataclass
class World:
    """Two live cells (one with a tree output) and one dead cell, plus a stray blob."""

    store: Store
    cache: ActionCache
    live_blob: str
    live_tree: str
    shared_blob: str
    dead_blob: str
    dead_tree: str
    stray: str

    @property
    def roots(self) -> dict[str, list[OutputRef]]:
        return {
            key("live-a"): [OutputRef(self.live_blob)],
            key("live-b"): [OutputRef(self.live_tree, "tree")],
        }

    def live_objects(self) -> set[str]:
        return {self.live_blob, *tree_objects(self.store, self.live_tree)}


@pytest.fixture
def world(tmp_path: Path) -> World:
    store, cache = Store(tmp_path / "store"), ActionCache(tmp_path / "store")
    live_blob = store.put_bytes(b"live blob")
    live_tree = put_files(
        store, {"index.html": b"<p>live</p>", "css/a.css": b"shared", "deep/er/x.txt": b"x"}
    )
    shared_blob = store.put_bytes(b"shared")  # also inside the dead tree
    dead_tree = put_files(store, {"old.html": b"<p>old</p>", "css/a.css": b"shared"})
    dead_blob = store.put_bytes(b"dead blob")
    stray = store.put_json({"nobody": "points here"})
    cache.put(key("live-a"), record(out=OutputRef(live_blob)))
    cache.put(key("live-b"), record(site=OutputRef(live_tree, "tree")))
    cache.put(key("dead"), record(out=OutputRef(dead_blob), site=OutputRef(dead_tree, "tree")))
    return World(store, cache, live_blob, live_tree, shared_blob, dead_blob, dead_tree, stray)


def all_refs(world: World) -> list[OutputRef]:
    return [ref for refs in world.roots.values() for ref in refs]


# verify ------------------------------------------------------------------------


def test_clean_store_verifies_ok(world: World) -> None:
    report = verify(world.store, world.cache, all_refs(world))
    assert report.ok
    assert report.corrupt == [] and report.missing == []
    assert report.checked == len(list(world.store.iter_digests()))
    assert report.checked >= 10


def test_verify_finds_a_corrupt_object(world: World) -> None:
    corrupt(world.store, world.shared_blob)
    report = verify(world.store, world.cache, all_refs(world))
    assert not report.ok
    assert report.corrupt == [world.shared_blob]
    assert report.missing == []


def test_verify_finds_a_missing_object_named_by_an_action_record(world: World) -> None:
    os.unlink(world.store.path(world.dead_blob))  # only the "dead" record names it
    report = verify(world.store, world.cache, all_refs(world))
    assert not report.ok
    assert report.missing == [world.dead_blob]
    assert report.corrupt == []


def test_verify_finds_a_missing_root_ref(world: World) -> None:
    gone = key("never stored")
    report = verify(world.store, world.cache, [*all_refs(world), OutputRef(gone)])
    assert report.missing == [gone]


def test_verify_reports_a_missing_blob_inside_a_tree(world: World) -> None:
    inner = blake3.blake3(b"x").hexdigest()
    os.unlink(world.store.path(inner))
    report = verify(world.store, world.cache, all_refs(world))
    assert report.missing == [inner]


def test_verify_reports_a_missing_subtree_instead_of_crashing(world: World) -> None:
    (css,) = [e["digest"] for e in read_tree(world.store, world.live_tree) if e["name"] == "css"]
    os.unlink(world.store.path(css))
    report = verify(world.store, world.cache, all_refs(world))
    assert report.missing == [css]


def test_verify_reports_a_corrupt_tree_instead_of_crashing(world: World) -> None:
    (deep,) = [e["digest"] for e in read_tree(world.store, world.live_tree) if e["name"] == "deep"]
    corrupt(world.store, deep, b"{not json")
    report = verify(world.store, world.cache, all_refs(world))
    assert report.corrupt == [deep]
    assert not report.ok


# gc ----------------------------------------------------------------------------


def test_gc_dry_run_removes_nothing_but_reports(world: World) -> None:
    before_objects = sorted(world.store.iter_digests())
    before_actions = sorted(world.cache.iter_keys())
    report = gc(world.store, world.cache, world.roots, dry_run=True)
    assert sorted(world.store.iter_digests()) == before_objects
    assert sorted(world.cache.iter_keys()) == before_actions
    assert report.removed_actions == [key("dead")]
    assert set(report.removed_objects) == set(before_objects) - world.live_objects()
    assert report.removed_objects  # there is something to collect
    assert report.freed_bytes == sum(
        world.store.path(d).stat().st_size for d in report.removed_objects
    )


def test_gc_removes_exactly_the_unreachable(world: World) -> None:
    before = set(world.store.iter_digests())
    live = world.live_objects()
    assert world.shared_blob in live  # reachable only as a blob inside a live tree
    expected_gone = before - live
    assert {world.dead_blob, world.dead_tree, world.stray} <= expected_gone

    report = gc(world.store, world.cache, world.roots, dry_run=False)

    assert set(report.removed_objects) == expected_gone
    assert set(world.store.iter_digests()) == live
    assert report.kept == len(live)
    assert report.removed_actions == [key("dead")]
    assert sorted(world.cache.iter_keys()) == sorted([key("live-a"), key("live-b")])
    assert verify(world.store, world.cache, all_refs(world)).ok
    # a second pass has nothing left to do
    again = gc(world.store, world.cache, world.roots, dry_run=False)
    assert again.removed_objects == [] and again.removed_actions == []


def test_gc_with_no_roots_empties_the_store(world: World) -> None:
    gc(world.store, world.cache, {}, dry_run=False)
    assert list(world.store.iter_digests()) == []
    assert list(world.cache.iter_keys()) == []


def test_gc_refuses_when_a_live_tree_cannot_be_read(world: World) -> None:
    """Below a corrupt or missing live sub-tree the live set is unknown: delete nothing."""
    (deep,) = [e["digest"] for e in read_tree(world.store, world.live_tree) if e["name"] == "deep"]
    corrupt(world.store, deep, b"{not json")
    before = sorted(world.store.iter_digests())
    with pytest.raises(StoreError, match="gc refused") as err:
        gc(world.store, world.cache, world.roots, dry_run=False)
    assert deep in str(err.value)
    # Nothing is deleted; reading the corrupt tree moved it to quarantine/ (verify on read).
    assert sorted(world.store.iter_digests()) == [d for d in before if d != deep]
    assert [p.name.split(".")[0] for p in world.store.quarantine_dir.iterdir()] == [deep]
    with pytest.raises(StoreError, match=deep):
        gc(world.store, world.cache, world.roots, dry_run=True)


def test_gc_tolerates_a_missing_root_output(world: World) -> None:
    roots = dict(world.roots, **{key("gone"): [OutputRef(key("never stored"), "tree")]})
    report = gc(world.store, world.cache, roots, dry_run=False)
    assert set(world.store.iter_digests()) == world.live_objects()
    assert report.removed_actions == [key("dead")]


# helpers -----------------------------------------------------------------------


def test_reachable_expands_trees_and_lists_missing_refs(world: World) -> None:
    gone = key("gone")
    seen, missing = reachable(
        world.store, [OutputRef(world.live_tree, "tree"), OutputRef(gone), OutputRef(gone)]
    )
    assert seen == set(tree_objects(world.store, world.live_tree))
    assert world.live_tree in seen and world.shared_blob in seen
    assert gone in missing


def test_outputs_refs_reads_a_record_and_refuses_a_malformed_one() -> None:
    d1, d2 = key("1"), key("2")
    refs = outputs_refs({"a": {"digest": d1}, "b": {"digest": d2, "type": "tree"}})
    assert refs == [OutputRef(d1, "blob"), OutputRef(d2, "tree")]
    with pytest.raises(StoreError, match="malformed outputs"):
        outputs_refs({"a": {"type": "blob"}})
    with pytest.raises(StoreError, match="malformed outputs"):
        outputs_refs({"a": "not a mapping"})  # type: ignore[dict-item]


def test_gc_keeps_what_a_kept_record_names_when_its_pointer_names_another_try(
    world: World,
) -> None:
    """Two builds raced on one cell: the record holds the first try's output, the pointer
    the second's. Both stay, so verify finds nothing missing."""
    first = world.store.put_bytes(b"first try")
    second = world.store.put_bytes(b"second try")
    world.cache.put(key("raced"), record(run=OutputRef(first)))
    roots = {**world.roots, key("raced"): [OutputRef(second)]}
    gc(world.store, world.cache, roots, dry_run=False)
    assert world.store.has(first) and world.store.has(second)
    assert verify(world.store, world.cache, [r for refs in roots.values() for r in refs]).ok
