"""`recon store verify` and `recon store gc`."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from recon.errors import StoreError
from recon.store.actions import ActionCache
from recon.store.objects import Store, hash_file
from recon.store.tree import read_tree


@dataclass(frozen=True)
class OutputRef:
    """A digest a cell produced, and whether it is a blob or a tree."""

    digest: str
    type: str = "blob"


@dataclass
class VerifyReport:
    checked: int = 0
    corrupt: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # action records removed by a repair

    @property
    def ok(self) -> bool:
        return not self.corrupt and not self.missing


def reachable(store: Store, refs: Iterable[OutputRef]) -> tuple[set[str], list[str]]:
    """Every object the refs reach (trees expanded), and the digests that are missing.

    A missing or unreadable (corrupt) tree is reported, not raised: what lies below it
    cannot be reached. A missing tree is listed in ``missing``; a corrupt one is in the
    reached set (its file exists) and ``verify``'s re-hash reports it.
    """
    walk = _Walk(store)
    for ref in refs:
        walk.visit(ref.digest, tree=ref.type == "tree")
    return walk.seen, walk.missing


class _Walk:
    """A depth-first walk from refs that records, rather than raises, what it cannot read."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.seen: set[str] = set()
        self.expanded: set[str] = set()
        self.missing: list[str] = []
        self.broken: list[str] = []  # sub-trees that are missing, trees that are not trees

    def visit(self, digest: str, *, tree: bool, inner: bool = False) -> None:
        if digest in self.expanded or (digest in self.seen and not tree):
            return
        if not self.store.has(digest):
            if digest not in self.missing:
                self.missing.append(digest)
            if tree and inner and digest not in self.broken:
                self.broken.append(digest)
            return
        self.seen.add(digest)
        if not tree:
            return
        self.expanded.add(digest)
        try:
            entries = read_tree(self.store, digest)
        except StoreError:
            self.broken.append(digest)
            return
        for entry in entries:
            self.visit(entry["digest"], tree=entry["type"] == "tree", inner=True)


def verify(
    store: Store, cache: ActionCache, refs: Iterable[OutputRef], *, repair: bool = False
) -> VerifyReport:
    """Re-hash every object, then check that every recorded output is present.

    ``repair`` quarantines the corrupt objects and drops every action record whose outputs
    reach a corrupt or missing object, so the cells that made them run again.
    """
    report = VerifyReport()
    for digest in store.iter_digests():
        report.checked += 1
        if hash_file(store.path(digest)) != digest:
            report.corrupt.append(digest)
            if repair:
                store.quarantine(digest)
    record_refs = [ref for key in cache.iter_keys() for ref in _record_refs(cache, key)]
    _, missing = reachable(store, [*refs, *record_refs])
    report.missing = sorted(set(missing))
    if repair:
        report.dropped = drop_reaching(store, cache, {*report.corrupt, *report.missing})
    return report


def _record_refs(cache: ActionCache, key: str) -> list[OutputRef]:
    record = cache.get(key) or {}
    try:
        return outputs_refs(record.get("outputs", {}))
    except StoreError:
        return []


def records_reaching(store: Store, cache: ActionCache, targets: set[str]) -> list[str]:
    """Keys of the action records whose outputs reach any of ``targets`` (trees expanded).

    A tree that cannot be read (missing, corrupt, not a tree) counts as reaching: what
    lies below it is unknown, so the record that names it can no longer be trusted.
    """
    memo: dict[str, bool] = {}

    def reaches(digest: str, tree: bool) -> bool:
        if digest in targets:
            return True
        if not tree:
            return False
        if digest not in memo:
            memo[digest] = False  # a tree never reaches itself
            try:
                entries = read_tree(store, digest)
            except StoreError:
                memo[digest] = True
            else:
                memo[digest] = any(reaches(e["digest"], e["type"] == "tree") for e in entries)
        return memo[digest]

    found: list[str] = []
    for key in list(cache.iter_keys()):
        record = cache.get(key)
        if record is None:
            continue
        try:
            refs = outputs_refs(record["outputs"])
        except StoreError:
            refs, found = [], [*found, key]
        if any(reaches(ref.digest, ref.type == "tree") for ref in refs):
            found.append(key)
    return found


def drop_reaching(store: Store, cache: ActionCache, targets: set[str]) -> list[str]:
    """Remove every action record that reaches ``targets``; the keys removed."""
    if not targets:
        return []
    keys = records_reaching(store, cache, targets)
    for key in keys:
        cache.remove(key)
    return keys


def outputs_refs(outputs: dict[str, dict[str, str]]) -> list[OutputRef]:
    """The refs of a cell's ``outputs`` mapping (``{name: {"digest", "type"}}``)."""
    try:
        return [OutputRef(o["digest"], o.get("type", "blob")) for o in outputs.values()]
    except (KeyError, TypeError, AttributeError) as err:
        raise StoreError(f"malformed outputs mapping: {outputs!r}") from err


@dataclass
class GcReport:
    kept: int = 0
    removed_objects: list[str] = field(default_factory=list)
    removed_actions: list[str] = field(default_factory=list)
    freed_bytes: int = 0


def gc(
    store: Store, cache: ActionCache, roots: dict[str, list[OutputRef]], *, dry_run: bool
) -> GcReport:
    """Remove objects and action records that no root reaches.

    ``roots`` maps each live cell key to its outputs (from pointer files and manifests).
    An action record whose key is not a root goes too, and what a kept record names is
    kept, so the cache never claims an output the store no longer holds.
    """
    walk = _Walk(store)
    kept = [key for key in cache.iter_keys() if key in roots]
    for refs in [*roots.values(), *(_record_refs(cache, key) for key in kept)]:
        for ref in refs:
            walk.visit(ref.digest, tree=ref.type == "tree")
    if walk.broken:
        raise StoreError(
            f"gc refused: live tree object(s) {', '.join(sorted(walk.broken))} are missing "
            "or corrupt, so what they reach is unknown; run `recon store verify` and rebuild"
        )
    live = walk.seen
    report = GcReport()
    for key in list(cache.iter_keys()):
        if key not in roots:
            report.removed_actions.append(key)
            if not dry_run:
                cache.remove(key)
    for digest in list(store.iter_digests()):
        if digest in live:
            report.kept += 1
            continue
        path = store.path(digest)
        report.removed_objects.append(digest)
        report.freed_bytes += path.stat().st_size
        if not dry_run:
            os.unlink(path)
    return report
