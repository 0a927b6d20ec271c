"""Taking a build output in: one rule for every backend, whatever the Candidate left (no
engine needed: real folders, real tar archives from tarfile and from GNU tar)."""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from recon.model import Budget
from recon.sandbox.outputs import (
    MAX_REFUSALS,
    OutputCaps,
    OutputRefused,
    check_tree,
    not_archived,
    output_folder,
    shown,
    take_folder,
    unpack_output,
)
from recon.store import Store, put_tree
from tests.sandbox.tricks import DEPTH, FILE_BYTES, FILES, INDEX, TRICKS, Trick, agent

CAPS = OutputCaps(files=20_000, depth=32, file_bytes=1024)
TRICK_CAPS = OutputCaps(files=FILES, depth=DEPTH, file_bytes=FILE_BYTES)
BUDGET = {"cpus": 1, "memory_mb": 256, "pids": 64, "wall_s": 60, "disk_mb": 64, "output_mb": 1}


def archive(folder: Path, name: str = "dist") -> io.BytesIO:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        tar.add(folder, arcname=name)
    data.seek(0)
    return data


def flood(folder: Path, count: int) -> Path:
    (folder / "a").mkdir(parents=True)
    for i in range(count):
        (folder / "a" / f"f{i}").touch()
    return folder


def files_of(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())


def crafted(*members: tuple[tarfile.TarInfo, bytes]) -> tarfile.TarFile:
    """A tar archive holding exactly ``members`` (what no file system could produce)."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for info, content in members:
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content) if content else None)
    data.seek(0)
    return tarfile.open(fileobj=data, mode="r:")


def member(name: str, kind: bytes = tarfile.REGTYPE, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, linkname, 0o644
    return info


# -- every trick, through both archivers ------------------------------------------------


def made(trick: Trick, root: Path) -> Path:
    """``root/dist`` built by the trick's agent, as a Candidate would build it."""
    root.mkdir()
    (root / "brief.md").write_text("the brief\n")
    script = root / "agent.py"
    script.write_text(agent(trick, "dist"))
    subprocess.run([sys.executable, str(script), str(root)], check=True, timeout=60)
    return root / "dist"


def native_way(folder: Path, out: Path) -> int:
    return take_folder(folder, "dist", out, TRICK_CAPS)


def gnu_tar_way(folder: Path, out: Path) -> int:
    """The docker backend's way: GNU tar archives the folder, ``unpack_output`` takes it.
    (The docker backend checks the caps in the container first, with ``find``.)"""
    check_tree(folder, "dist", TRICK_CAPS)
    tar = subprocess.run(["tar", "-cf", "-", "--", "dist"], cwd=folder.parent,
                         capture_output=True, check=True, timeout=60)  # fmt: skip
    with tarfile.open(fileobj=io.BytesIO(tar.stdout), mode="r:") as archive:
        return unpack_output(archive, "dist", out, TRICK_CAPS, not_archived(tar.stderr))


@pytest.mark.parametrize("way", [native_way, gnu_tar_way], ids=["tarfile", "gnu-tar"])
@pytest.mark.parametrize("trick", TRICKS, ids=[t.name for t in TRICKS])
def test_every_trick_is_normalised_or_refused_naming_the_path(
    tmp_path: Path, trick: Trick, way: object
) -> None:
    folder = made(trick, tmp_path / "ws")
    out = tmp_path / "out"
    assert callable(way)
    if not trick.refusals:
        assert way(folder, out) == len(trick.files)
        assert files_of(out) == list(trick.files)
        assert not [p for p in out.rglob("*") if p.is_symlink()]
        for rel in trick.files:
            assert (out / rel).read_text() == ("h1{}" if rel.endswith(".css") else INDEX)
        return
    with pytest.raises(OutputRefused) as err:
        way(folder, out)
    expected = trick.expected("dist")
    assert err.value.refusals == expected
    if "budget." not in expected[0]:
        more = f" (and {len(expected) - 1} more)" if len(expected) > 1 else ""
        assert err.value.reason == f"the build output was refused: {expected[0]}{more}"
    assert not out.exists()  # nothing half-unpacked is left


def test_a_device_is_refused(tmp_path: Path) -> None:
    device = member("dist/null", tarfile.CHRTYPE)
    block = member("dist/disk", tarfile.BLKTYPE)
    with (
        crafted((member("dist", tarfile.DIRTYPE), b""), (device, b""), (block, b"")) as tar,
        pytest.raises(OutputRefused) as err,
    ):
        unpack_output(tar, "dist", tmp_path / "out", CAPS)
    assert err.value.refusals == [
        "dist/null: device file refused",
        "dist/disk: device file refused",
    ]


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "out"


def test_members_no_file_system_holds_are_refused(out: Path) -> None:
    with (
        crafted(
            (member("dist/index.html"), b"hi"),
            (member("dist/../escape"), b"x"),
            (member("/abs/dist/x"), b"x"),
            (member("other/x"), b"x"),
            (member("dist/index.html"), b"again"),
            (member("dist/l", tarfile.SYMTYPE, "index.html"), b""),
            (member("dist/l/under"), b"x"),
            (member("dist/h", tarfile.LNKTYPE, "elsewhere/f"), b""),
            (member("dist/odd", b"Z"), b""),
        ) as tar,
        pytest.raises(OutputRefused) as err,
    ):
        unpack_output(tar, "dist", out, CAPS)
    assert err.value.refusals == [
        "dist/../escape: path outside the output folder",
        "/abs/dist/x: path outside the output folder",
        "other/x: path outside the output folder",
        "dist/index.html: appears twice in the archive",
        "dist/l/under: lies below a file or a link",
        "dist/odd: unsupported file type b'Z' refused",
        "dist/h: link to elsewhere/f leads outside the output",
    ]
    assert not out.exists()


def test_links_resolve_as_the_kernel_resolves_them(tmp_path: Path, out: Path) -> None:
    dist = tmp_path / "dist"
    (dist / "a" / "b").mkdir(parents=True)
    (dist / "a" / "b" / "page.html").write_text("page")
    os.symlink("a", dist / "l")  # a folder link
    os.symlink("l/b/page.html", dist / "through.html")  # through a linked folder
    os.symlink("through.html", dist / "chain.html")  # a link to a link
    os.symlink("../../index.html", dist / "a" / "b" / "home.html")  # up, inside the output
    os.symlink("a/b/../b/page.html", dist / "dotdot.html")
    (dist / "index.html").write_text("home")
    os.symlink("l", dist / "again")  # a folder link to a folder link
    with tarfile.open(fileobj=archive(dist), mode="r:") as tar:
        files = unpack_output(tar, "dist", out, CAPS)
    inner = ["b/home.html", "b/page.html"]
    assert files_of(out) == sorted(
        ["chain.html", "dotdot.html", "index.html", "through.html"]
        + [f"{top}/{rel}" for top in ("a", "again", "l") for rel in inner]
    )
    assert files == 10
    assert (out / "again" / "b" / "home.html").read_text() == "home"  # copied with its links
    assert (out / "chain.html").read_text() == "page"


def test_executable_bits_are_kept_and_nothing_else(tmp_path: Path, out: Path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "run.sh").write_text("#!/bin/sh\n")
    (dist / "run.sh").chmod(0o4777)
    (dist / "page.html").write_text("x")
    (dist / "page.html").chmod(0o600)
    take_folder(dist, "dist", out, CAPS)
    assert (out / "run.sh").stat().st_mode & 0o7777 == 0o755
    assert (out / "page.html").stat().st_mode & 0o7777 == 0o644


def test_an_honest_output_stores_as_the_same_tree_it_was(tmp_path: Path, out: Path) -> None:
    dist = tmp_path / "dist"
    (dist / "css").mkdir(parents=True)
    (dist / "empty").mkdir()
    (dist / "index.html").write_text("<h1>hi</h1>")
    (dist / "css" / "a.css").write_text("h1{}")
    (dist / "tool").write_text("#!/bin/sh\n")
    (dist / "tool").chmod(0o700)
    take_folder(dist, "dist", out, CAPS)
    store = Store(tmp_path / "store")
    assert put_tree(store, out) == put_tree(store, dist)  # no honest build re-keys


def test_refusals_are_listed_up_to_a_cap_and_names_shown_escaped(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    for i in range(MAX_REFUSALS + 5):
        os.mkfifo(dist / f"p{i:03}")
    with pytest.raises(OutputRefused) as err:
        take_folder(dist, "dist", tmp_path / "out", CAPS)
    assert len(err.value.refusals) == MAX_REFUSALS + 1
    assert err.value.refusals[-1] == "5 more refusals not listed"
    first, more = "dist/p000: fifo refused", MAX_REFUSALS + 4
    assert err.value.reason == f"the build output was refused: {first} (and {more} more)"
    assert shown(os.fsdecode(b"a\xff\xfe/b\tc\x1b")) == "a\\xff\\xfe/b\\tc\\x1b"
    assert shown("caf\u00e9 \u200b") == "caf\u00e9 \\u200b"


def test_an_unreadable_file_or_folder_is_refused_not_raised(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file: nothing is unreadable here")
    dist = tmp_path / "dist"
    (dist / "locked").mkdir(parents=True)
    (dist / "secret.html").write_text("x")
    (dist / "secret.html").chmod(0)
    (dist / "locked").chmod(0)
    try:
        with pytest.raises(OutputRefused) as err:
            take_folder(dist, "dist", tmp_path / "out", CAPS)
    finally:
        (dist / "locked").chmod(0o755)
    assert err.value.refusals == [
        "dist/secret.html: cannot be read (Permission denied)",
        "dist/locked: cannot be read (Permission denied)",
    ]


def test_the_output_folder_itself_must_be_a_folder_in_place(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "real").mkdir(parents=True)
    assert output_folder(ws, "dist") is None
    os.symlink("real", ws / "dist")
    with pytest.raises(OutputRefused, match="dist: the output folder is a symlink or lies"):
        output_folder(ws, "dist")
    (ws / "dist").unlink()
    (ws / "dist").write_text("a file")
    with pytest.raises(OutputRefused, match="dist: the output is not a folder"):
        output_folder(ws, "dist")
    os.symlink("real", ws / "behind")
    (ws / "real" / "dist").mkdir()
    with pytest.raises(OutputRefused, match="the output folder is a symlink or lies behind"):
        output_folder(ws, "behind/dist")
    assert output_folder(ws, "real/dist/") == ws / "real" / "dist"


def test_gnu_tar_messages_become_refusals() -> None:
    stderr = b"tar: dist/sock: socket ignored\ntar: dist/x: Cannot open: Permission denied\n"
    assert not_archived(stderr) == [
        "dist/sock: socket refused",
        "not archived: dist/x: Cannot open: Permission denied",
    ]


# -- the caps ---------------------------------------------------------------------------


def test_too_many_files_are_refused_after_reading_little_of_the_archive(tmp_path: Path) -> None:
    data = archive(flood(tmp_path / "dist", 5_000))
    size = len(data.getvalue())
    caps = OutputCaps(files=100, depth=32, file_bytes=1024)
    with tarfile.open(fileobj=data, mode="r:") as tar, pytest.raises(OutputRefused) as err:
        unpack_output(tar, "dist", tmp_path / "out", caps)
    assert err.value.reason == (
        "the build output has more than 100 files and folders (budget.output_files)"
    )
    assert err.value.refusals == [
        "dist: more than 100 files and folders; budget.output_files is 100"
    ]
    assert data.tell() < size / 20  # it stopped at the cap, not at the end
    assert not (tmp_path / "out").exists()  # nothing half-unpacked is left


def test_a_path_deeper_than_the_cap_is_refused(tmp_path: Path) -> None:
    deep = tmp_path / "dist" / "1" / "2" / "3" / "4"
    deep.mkdir(parents=True)
    (deep / "x").write_text("deep")
    for depth, ok in ((5, True), (4, False)):
        caps = OutputCaps(files=100, depth=depth, file_bytes=1024)
        out = tmp_path / f"out{depth}"
        with tarfile.open(fileobj=archive(tmp_path / "dist"), mode="r:") as tar:
            if ok:
                assert unpack_output(tar, "dist", out, caps) == 1
            else:
                with pytest.raises(OutputRefused, match="more than 4 levels deep"):
                    unpack_output(tar, "dist", out, caps)


def test_links_to_a_folder_cannot_multiply_the_output_past_the_cap(tmp_path: Path) -> None:
    dist = flood(tmp_path / "dist", 30)
    for i in range(40):
        os.symlink("a", dist / f"copy{i}")  # 40 × 31 entries once copied
    caps = OutputCaps(files=200, depth=32, file_bytes=1024)
    with (
        tarfile.open(fileobj=archive(dist), mode="r:") as tar,
        pytest.raises(OutputRefused, match="more than 200 files"),
    ):
        unpack_output(tar, "dist", tmp_path / "out", caps)
    assert not (tmp_path / "out").exists()


def test_nested_folder_links_cannot_nest_past_the_depth_cap(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    for i in range(60):  # d0/next -> d1, d1/next -> d2, ...: one more level per link
        (dist / f"d{i}").mkdir()
        os.symlink(f"../d{i + 1}", dist / f"d{i}" / "next")
    (dist / "d60").mkdir()
    caps = OutputCaps(files=20_000, depth=32, file_bytes=1024)
    with pytest.raises(OutputRefused, match="more than 32 levels deep"):
        take_folder(dist, "dist", tmp_path / "out", caps)


def test_check_tree_applies_the_same_caps_in_place(tmp_path: Path) -> None:
    dist = flood(tmp_path / "dist", 50)
    check_tree(dist, "dist", OutputCaps(files=51, depth=2, file_bytes=0))
    with pytest.raises(OutputRefused, match="more than 50 files and folders"):
        check_tree(dist, "dist", OutputCaps(files=50, depth=2, file_bytes=0))
    with pytest.raises(OutputRefused, match="more than 1 levels deep"):
        check_tree(dist, "dist", OutputCaps(files=100, depth=1, file_bytes=0))
    os.symlink(".", dist / "a" / "loop")  # links are not followed
    check_tree(dist, "dist", OutputCaps(files=52, depth=2, file_bytes=0))


def test_budget_caps_default_range_and_keep_old_digests() -> None:
    budget = Budget.model_validate(BUDGET)
    assert (budget.output_files, budget.output_depth) == (20_000, 32)
    assert budget.model_dump() == {**BUDGET, "cpus": 1.0}  # an old entry's digest input
    custom = Budget.model_validate({**BUDGET, "output_files": 500, "output_depth": 8})
    assert custom.model_dump()["output_files"] == 500 and custom.model_dump()["output_depth"] == 8
    for field, value in (("output_files", 0), ("output_files", 10**7), ("output_depth", 0),
                         ("output_depth", 1000)):  # fmt: skip
        with pytest.raises(ValidationError, match=field):
            Budget.model_validate({**BUDGET, field: value})


# -- whatever the archive holds: a clean folder or OutputRefused, never another exception --

NAMES = (["a", "b", "a/b", "a/b/c", "c"], ["..", ".", "a/..", "a/../b", "", "x\udcff", "x\ny"])
KINDS = ([tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE],
         [tarfile.FIFOTYPE, tarfile.CHRTYPE, b"Z"])  # fmt: skip
TARGETS = (["a", "b", "a/b", "c", "../a", "dist/a", "dist/a/b"],
           ["..", ".", "/a", "a/b/../..", "", "dist"])  # fmt: skip


def pick(rng: random.Random, choices: tuple[list[Any], list[Any]]) -> Any:
    """Mostly an ordinary choice, one time in ten an odd one."""
    return rng.choice(choices[rng.random() < 0.1])


def test_a_thousand_random_archives_give_a_clean_folder_or_a_refusal(tmp_path: Path) -> None:
    rng = random.Random(27)  # the same thousand archives every run
    outcomes = {"taken": 0, "refused": 0}
    for n in range(1000):
        members = []
        for _ in range(rng.randint(1, 6)):
            kind = pick(rng, KINDS)
            info = member(f"dist/{pick(rng, NAMES)}", kind, pick(rng, TARGETS))
            members.append((info, b"x" * rng.randint(0, 3) if kind == tarfile.REGTYPE else b""))
        out = tmp_path / f"out{n}"
        caps = OutputCaps(files=rng.randint(4, 30), depth=rng.randint(2, 6), file_bytes=2)
        with crafted(*members) as tar:
            try:
                unpack_output(tar, "dist", out, caps)
            except OutputRefused as err:
                assert err.refusals and not out.exists()
                outcomes["refused"] += 1
                continue
        held = list(out.rglob("*"))
        assert all(p.is_file() or p.is_dir() for p in held)
        assert not [p for p in held if p.is_symlink()]
        outcomes["taken"] += 1
    assert min(outcomes.values()) > 50, outcomes  # both answers were exercised
