"""Trees: Merkle roots over folders, modes, refusal of symlinks and of names that are not
UTF-8, checkout round trips."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import blake3
import pytest

from recon.errors import StoreError
from recon.store import (
    Store,
    TreeRefused,
    checkout_tree,
    put_files,
    put_tree,
    read_tree,
    tree_files,
    tree_reader,
    walk_tree,
)
from recon.store.tree import tree_objects

FILES = {
    "index.html": b"<!doctype html><p>hi</p>\n",
    "css/style.css": b"p { color: red }\n",
    "js/app.js": b"console.log(1)\n",
    "a/b/c/deep.txt": b"deep content\n",
    "a/b/sibling.txt": b"sibling\n",
    "a/top.txt": b"top\n",
}


def write_files(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o644)
    return root


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under root: content and permission bits."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), stat.S_IMODE(p.stat().st_mode))
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def subtree(store: Store, root: str, rel: str) -> str:
    """The digest of the tree object at folder ``rel`` ("" is the root)."""
    digest = root
    for part in filter(None, rel.split("/")):
        (entry,) = [e for e in read_tree(store, digest) if e["name"] == part]
        assert entry["type"] == "tree"
        digest = entry["digest"]
    return digest


def test_same_content_in_two_folders_gives_the_same_root(store: Store, tmp_path: Path) -> None:
    one = write_files(tmp_path / "one", FILES)
    two = write_files(tmp_path / "elsewhere" / "two", dict(reversed(FILES.items())))
    assert put_tree(store, one) == put_tree(store, two)


def test_tree_object_is_sorted_listing_of_blobs_and_subtrees(store: Store, tmp_path: Path) -> None:
    root = put_tree(store, write_files(tmp_path / "src", FILES))
    entries = read_tree(store, root)
    assert [e["name"] for e in entries] == ["a", "css", "index.html", "js"]
    index = next(e for e in entries if e["name"] == "index.html")
    data = FILES["index.html"]
    assert index == {
        "name": "index.html",
        "type": "blob",
        "mode": 0o644,
        "size": len(data),
        "digest": blake3.blake3(data).hexdigest(),
    }
    assert {e["name"]: e["type"] for e in entries}["css"] == "tree"
    a = next(e for e in entries if e["name"] == "a")
    assert a["size"] == sum(len(v) for k, v in FILES.items() if k.startswith("a/"))


def test_one_byte_change_deep_down_changes_only_the_trees_on_its_path(
    store: Store, tmp_path: Path
) -> None:
    before = put_tree(store, write_files(tmp_path / "v1", FILES))
    changed = dict(FILES, **{"a/b/c/deep.txt": b"deep contenT\n"})  # one byte, same size
    after = put_tree(store, write_files(tmp_path / "v2", changed))
    assert before != after

    on_path = ["", "a", "a/b", "a/b/c"]
    off_path = ["css", "js"]
    for rel in on_path:
        assert subtree(store, before, rel) != subtree(store, after, rel), rel
    for rel in off_path:
        assert subtree(store, before, rel) == subtree(store, after, rel), rel
    # siblings of the changed file keep their blob digests
    old, new = tree_files(store, before), tree_files(store, after)
    assert {p for p in old if old[p].digest != new[p].digest} == {"a/b/c/deep.txt"}


def test_executable_bit_is_recorded_and_changes_the_root(store: Store, tmp_path: Path) -> None:
    folder = write_files(tmp_path / "src", {"run.sh": b"#!/bin/sh\necho hi\n", "x.txt": b"x"})
    plain = put_tree(store, folder)
    (folder / "run.sh").chmod(0o755)
    executable = put_tree(store, folder)
    assert plain != executable
    modes = {f.path: f.mode for f in walk_tree(store, executable)}
    assert modes == {"run.sh": 0o755, "x.txt": 0o644}
    (folder / "run.sh").chmod(0o700)  # any x bit counts as executable; other bits are dropped
    assert put_tree(store, folder) == executable


def test_symlinks_are_refused_with_the_path_in_the_message(store: Store, tmp_path: Path) -> None:
    folder = write_files(tmp_path / "src", {"real.txt": b"real", "sub/ok.txt": b"ok"})
    link = folder / "sub" / "link.txt"
    os.symlink(folder / "real.txt", link)
    with pytest.raises(StoreError) as err:
        put_tree(store, folder)
    assert str(link) in str(err.value)
    assert "symlink" in str(err.value)


def test_a_name_that_is_not_utf8_is_refused_naming_the_path(store: Store, tmp_path: Path) -> None:
    folder = write_files(tmp_path / "src", {"sub/ok.txt": b"ok"})
    (folder / "sub" / os.fsdecode(b"bad\xff.html")).write_text("x")
    with pytest.raises(TreeRefused) as err:  # a StoreError, not a UnicodeEncodeError
        put_tree(store, folder)
    assert str(err.value) == f"{folder}/sub/bad\\xff.html: name is not valid UTF-8; refused"
    assert err.value.path == folder / "sub" / os.fsdecode(b"bad\xff.html")
    assert isinstance(err.value, StoreError)


def test_symlinked_folder_is_refused_too(store: Store, tmp_path: Path) -> None:
    folder = write_files(tmp_path / "src", {"sub/ok.txt": b"ok"})
    os.symlink(folder / "sub", folder / "alias")
    with pytest.raises(StoreError, match="alias"):
        put_tree(store, folder)


def test_checkout_round_trips_content_and_modes(store: Store, tmp_path: Path) -> None:
    folder = write_files(tmp_path / "src", FILES)
    (folder / "js" / "app.js").chmod(0o755)
    root = put_tree(store, folder)
    dest = tmp_path / "checkout"
    checkout_tree(store, root, dest)
    assert snapshot(dest) == snapshot(folder)
    assert snapshot(dest)["js/app.js"][1] == 0o755
    assert put_tree(store, dest) == root


def test_checkout_recreates_empty_folders(store: Store, tmp_path: Path) -> None:
    folder = write_files(tmp_path / "src", {"keep.txt": b"k"})
    (folder / "empty" / "nested").mkdir(parents=True)
    root = put_tree(store, folder)
    dest = tmp_path / "checkout"
    checkout_tree(store, root, dest)
    assert (dest / "empty" / "nested").is_dir()
    assert put_tree(store, dest) == root


def test_put_files_equals_put_tree_of_the_same_folder(store: Store, tmp_path: Path) -> None:
    folder = write_files(tmp_path / "src", FILES)
    assert put_files(store, FILES) == put_tree(store, folder)
    assert put_files(store, {"/" + k: v for k, v in FILES.items()}) == put_tree(store, folder)


def test_put_files_differs_when_any_byte_differs(store: Store) -> None:
    changed = dict(FILES, **{"a/top.txt": b"tOp\n"})
    assert put_files(store, changed) != put_files(store, FILES)


def test_put_files_refuses_a_path_that_is_both_file_and_folder(store: Store) -> None:
    with pytest.raises(StoreError, match="a/b"):
        put_files(store, {"a/b": b"file", "a/b/c.txt": b"nested"})
    with pytest.raises(StoreError, match="a/b"):
        put_files(store, {"a/b/c.txt": b"nested", "a/b": b"file"})


def test_tree_reader_reads_files_and_returns_none_for_missing(store: Store, tmp_path: Path) -> None:
    read = tree_reader(store, put_tree(store, write_files(tmp_path / "src", FILES)))
    assert read("a/b/c/deep.txt") == FILES["a/b/c/deep.txt"]
    assert read("/index.html") == FILES["index.html"]
    assert read("nope.txt") is None
    assert read("a/b/c/missing.txt") is None
    assert read("a/b") is None  # a folder is not a file


def test_tree_objects_lists_every_tree_and_blob(store: Store) -> None:
    root = put_files(store, FILES)
    reached = set(tree_objects(store, root))
    blobs = {blake3.blake3(v).hexdigest() for v in FILES.values()}
    trees = {subtree(store, root, rel) for rel in ["", "a", "a/b", "a/b/c", "css", "js"]}
    assert reached == blobs | trees


def test_read_tree_refuses_a_blob(store: Store) -> None:
    blob = store.put_bytes(b"not a tree")
    json_blob = store.put_json({"entries": []})
    for digest in (blob, json_blob):
        with pytest.raises(StoreError, match="not a tree object"):
            read_tree(store, digest)
