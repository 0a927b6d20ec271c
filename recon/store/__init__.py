"""recon.store: content-addressed blobs, Merkle trees, the action cache and the stat cache."""

from recon.store.actions import ActionCache
from recon.store.atomic import replace_dir, write_atomic, write_once
from recon.store.canonical import canonical_json, digest_bytes, digest_json
from recon.store.disk import DiskFull, space_for
from recon.store.guard import StoreGuard
from recon.store.maintenance import (
    GcReport,
    OutputRef,
    VerifyReport,
    drop_reaching,
    gc,
    outputs_refs,
    reachable,
    verify,
)
from recon.store.objects import CorruptObject, MissingObject, ObjectFault, Store, hash_file
from recon.store.statcache import StatCache
from recon.store.tree import (
    TreeFile,
    TreeRefused,
    checkout_tree,
    put_files,
    put_tree,
    read_tree,
    tree_files,
    tree_reader,
    walk_tree,
)

__all__ = [
    "ActionCache",
    "CorruptObject",
    "DiskFull",
    "GcReport",
    "MissingObject",
    "ObjectFault",
    "OutputRef",
    "StatCache",
    "Store",
    "StoreGuard",
    "TreeFile",
    "TreeRefused",
    "VerifyReport",
    "canonical_json",
    "checkout_tree",
    "digest_bytes",
    "digest_json",
    "drop_reaching",
    "gc",
    "hash_file",
    "outputs_refs",
    "put_files",
    "put_tree",
    "reachable",
    "read_tree",
    "replace_dir",
    "space_for",
    "tree_files",
    "tree_reader",
    "verify",
    "walk_tree",
    "write_atomic",
    "write_once",
]
