"""recon.store: content-addressed blobs, Merkle trees, the action cache and the stat cache."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.store.actions import ActionCache as ActionCache
    from recon.store.atomic import replace_dir as replace_dir
    from recon.store.atomic import write_atomic as write_atomic
    from recon.store.atomic import write_once as write_once
    from recon.store.canonical import canonical_json as canonical_json
    from recon.store.canonical import digest_bytes as digest_bytes
    from recon.store.canonical import digest_json as digest_json
    from recon.store.disk import DiskFull as DiskFull
    from recon.store.disk import space_for as space_for
    from recon.store.guard import StoreGuard as StoreGuard
    from recon.store.layout import StoreLayout as StoreLayout
    from recon.store.maintenance import GcReport as GcReport
    from recon.store.maintenance import OutputRef as OutputRef
    from recon.store.maintenance import VerifyReport as VerifyReport
    from recon.store.maintenance import drop_reaching as drop_reaching
    from recon.store.maintenance import gc as gc
    from recon.store.maintenance import outputs_refs as outputs_refs
    from recon.store.maintenance import reachable as reachable
    from recon.store.maintenance import verify as verify
    from recon.store.objects import CorruptObject as CorruptObject
    from recon.store.objects import MissingObject as MissingObject
    from recon.store.objects import ObjectFault as ObjectFault
    from recon.store.objects import Store as Store
    from recon.store.objects import hash_file as hash_file
    from recon.store.statcache import StatCache as StatCache
    from recon.store.tree import TreeFile as TreeFile
    from recon.store.tree import TreeRefused as TreeRefused
    from recon.store.tree import checkout_tree as checkout_tree
    from recon.store.tree import put_files as put_files
    from recon.store.tree import put_tree as put_tree
    from recon.store.tree import read_tree as read_tree
    from recon.store.tree import tree_files as tree_files
    from recon.store.tree import tree_reader as tree_reader
    from recon.store.tree import walk_tree as walk_tree

_EXPORTS = {
    "ActionCache": "recon.store.actions",
    "replace_dir": "recon.store.atomic",
    "write_atomic": "recon.store.atomic",
    "write_once": "recon.store.atomic",
    "canonical_json": "recon.store.canonical",
    "digest_bytes": "recon.store.canonical",
    "digest_json": "recon.store.canonical",
    "DiskFull": "recon.store.disk",
    "space_for": "recon.store.disk",
    "StoreGuard": "recon.store.guard",
    "StoreLayout": "recon.store.layout",
    "GcReport": "recon.store.maintenance",
    "OutputRef": "recon.store.maintenance",
    "VerifyReport": "recon.store.maintenance",
    "drop_reaching": "recon.store.maintenance",
    "gc": "recon.store.maintenance",
    "outputs_refs": "recon.store.maintenance",
    "reachable": "recon.store.maintenance",
    "verify": "recon.store.maintenance",
    "CorruptObject": "recon.store.objects",
    "MissingObject": "recon.store.objects",
    "ObjectFault": "recon.store.objects",
    "Store": "recon.store.objects",
    "hash_file": "recon.store.objects",
    "StatCache": "recon.store.statcache",
    "TreeFile": "recon.store.tree",
    "TreeRefused": "recon.store.tree",
    "checkout_tree": "recon.store.tree",
    "put_files": "recon.store.tree",
    "put_tree": "recon.store.tree",
    "read_tree": "recon.store.tree",
    "tree_files": "recon.store.tree",
    "tree_reader": "recon.store.tree",
    "walk_tree": "recon.store.tree",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
