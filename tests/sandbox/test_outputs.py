"""Taking a build output in: unpacking with refusals and the file-count and depth caps (no
engine needed: real tar archives and real folders)."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest
from pydantic import ValidationError

from recon.model import Budget
from recon.sandbox.outputs import OutputCaps, OutputRefused, check_tree, unpack_output

CAPS = OutputCaps(files=20_000, depth=32, file_bytes=1024)
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


def test_an_output_within_the_caps_is_unpacked_with_its_refusals(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    (dist / "css").mkdir(parents=True)
    (dist / "index.html").write_text("<h1>hi</h1>")
    (dist / "css" / "a.css").write_text("h1{}")
    (dist / "big").write_bytes(b"x" * 2048)
    os.symlink("index.html", dist / "alias.html")
    os.symlink("css", dist / "styles")
    os.symlink("/etc/passwd", dist / "passwd")
    refusals: list[str] = []
    with tarfile.open(fileobj=archive(dist), mode="r:") as tar:
        files = unpack_output(tar, "dist", tmp_path / "out", CAPS, refusals)
    out = tmp_path / "out"
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) == [
        "alias.html", "css/a.css", "index.html", "styles/a.css",
    ]  # fmt: skip
    assert files == 4 and not (out / "alias.html").is_symlink()
    assert refusals == [  # tar adds a folder's entries in name order
        "dist/big: 2048 bytes is over the per-file cap of 1024",
        "dist/passwd: link to /etc/passwd leads outside the output",
    ]


def test_too_many_files_are_refused_after_reading_little_of_the_archive(tmp_path: Path) -> None:
    data = archive(flood(tmp_path / "dist", 5_000))
    size = len(data.getvalue())
    caps = OutputCaps(files=100, depth=32, file_bytes=1024)
    refusals: list[str] = []
    with tarfile.open(fileobj=data, mode="r:") as tar, pytest.raises(OutputRefused) as err:
        unpack_output(tar, "dist", tmp_path / "out", caps, refusals)
    assert err.value.reason == (
        "the build output has more than 100 files and folders (budget.output_files)"
    )
    assert err.value.refusal == "dist: more than 100 files and folders; budget.output_files is 100"
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
                assert unpack_output(tar, "dist", out, caps, []) == 1
            else:
                with pytest.raises(OutputRefused, match="more than 4 levels deep"):
                    unpack_output(tar, "dist", out, caps, [])


def test_links_to_a_folder_cannot_multiply_the_output_past_the_cap(tmp_path: Path) -> None:
    dist = flood(tmp_path / "dist", 30)
    for i in range(40):
        os.symlink("a", dist / f"copy{i}")  # 40 × 31 entries once copied
    caps = OutputCaps(files=200, depth=32, file_bytes=1024)
    with (
        tarfile.open(fileobj=archive(dist), mode="r:") as tar,
        pytest.raises(OutputRefused, match="more than 200 files"),
    ):
        unpack_output(tar, "dist", tmp_path / "out", caps, [])
    assert not (tmp_path / "out").exists()


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
