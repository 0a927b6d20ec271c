"""A build output as the harness takes it in: unpacked with refusals, and within budget.

Pure file logic (no engine): the docker backend streams the output folder out of the
container as a tar and calls ``unpack_output``; the native backend checks its output folder
in place with ``check_tree``. Both hold an output to the entry's budget: at most
``output_files`` files and folders, no path more than ``output_depth`` levels below the
output folder, no file over the per-file cap. Counting stops as soon as a cap is passed, so
a flood costs at most one cap's worth of work; past a cap nothing is kept (``OutputRefused``).
Inside the output, symlinks become copies of what they name, and those copies count too.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path

from recon.model import Budget


@dataclass(frozen=True)
class OutputCaps:
    files: int  # files and folders below the output folder
    depth: int  # levels below the output folder
    file_bytes: int  # per file

    @classmethod
    def of(cls, budget: Budget, file_bytes: int) -> OutputCaps:
        return cls(budget.output_files, budget.output_depth, file_bytes)


class OutputRefused(Exception):
    """The output breaks a cap: ``reason`` for the attempt, ``refusal`` for its record."""

    def __init__(self, reason: str, refusal: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.refusal = refusal


def too_many(output: str, caps: OutputCaps) -> OutputRefused:
    return OutputRefused(
        f"the build output has more than {caps.files} files and folders (budget.output_files)",
        f"{output}: more than {caps.files} files and folders; budget.output_files is {caps.files}",
    )


def too_deep(output: str, caps: OutputCaps) -> OutputRefused:
    return OutputRefused(
        f"the build output is more than {caps.depth} levels deep (budget.output_depth)",
        f"{output}: a path more than {caps.depth} levels deep; budget.output_depth is {caps.depth}",
    )


def check_tree(root: Path, output: str, caps: OutputCaps) -> None:
    """Raise ``OutputRefused`` when the folder ``root`` breaks a cap (stops early)."""
    _walk_within(root, output, caps, caps.files, 0)


def _walk_within(root: Path, output: str, caps: OutputCaps, room: int, base_depth: int) -> int:
    """Count the entries below ``root`` (whose own depth is ``base_depth``), raising once
    there are more than ``room`` or one lies deeper than the cap. Links are not followed."""
    seen = 0
    stack = [(root, base_depth)]
    while stack:
        folder, depth = stack.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                seen += 1
                if seen > room:
                    raise too_many(output, caps)
                if depth + 1 > caps.depth:
                    raise too_deep(output, caps)
                if entry.is_dir(follow_symlinks=False):
                    stack.append((Path(entry.path), depth + 1))
    return seen


def unpack_output(
    tar: tarfile.TarFile, output: str, out: Path, caps: OutputCaps, refusals: list[str]
) -> int:
    """Unpack members under ``output/`` into ``out`` (created here) and return how many files
    it holds; refuse (``refusals``) what is not a plain file, folder or in-output link.
    Past a cap, ``out`` is removed and ``OutputRefused`` raised."""
    out.mkdir(parents=True)
    try:
        return _unpack(tar, output, out, caps, refusals)
    except OutputRefused:
        shutil.rmtree(out, ignore_errors=True)
        raise


def _unpack(
    tar: tarfile.TarFile, output: str, out: Path, caps: OutputCaps, refusals: list[str]
) -> int:
    links: list[tuple[str, str]] = []
    files = entries = 0
    for member in tar:
        rel = _relative(member.name, output)
        if rel is None:
            refusals.append(f"{member.name}: path outside the output folder")
            continue
        if rel == ".":
            continue
        entries += 1
        if entries > caps.files:
            raise too_many(output, caps)
        if rel.count("/") + 1 > caps.depth:
            raise too_deep(output, caps)
        shown = posixpath.join(output, rel)
        if member.isdir():
            (out / rel).mkdir(parents=True, exist_ok=True)
        elif member.isreg():
            files += _write(tar, member, out / rel, shown, caps, refusals)
        elif member.issym() or member.islnk():
            target = _link_target(rel, member, output)
            if target is None:
                refusals.append(f"{shown}: link to {member.linkname} leads outside the output")
            else:
                links.append((rel, target))
        elif member.ischr() or member.isblk():
            refusals.append(f"{shown}: device file refused")
        elif member.isfifo():
            refusals.append(f"{shown}: fifo refused")
        else:
            refusals.append(f"{shown}: unsupported file type {member.type!r} refused")
    return files + _materialise(links, out, output, caps, entries, refusals)


def _write(
    tar: tarfile.TarFile,
    member: tarfile.TarInfo,
    dest: Path,
    shown: str,
    caps: OutputCaps,
    refusals: list[str],
) -> int:
    if member.size > caps.file_bytes:
        refusals.append(
            f"{shown}: {member.size} bytes is over the per-file cap of {caps.file_bytes}"
        )
        return 0
    src = tar.extractfile(member)
    assert src is not None
    dest.parent.mkdir(parents=True, exist_ok=True)
    with dest.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return 1


def _relative(name: str, output: str) -> str | None:
    name = posixpath.normpath(name)
    if name == output:
        return "."
    if name.startswith(output + "/") and ".." not in name.split("/"):
        return name[len(output) + 1 :]
    return None


def _link_target(rel: str, member: tarfile.TarInfo, output: str) -> str | None:
    """The link's target relative to the output folder, or None when it leads outside."""
    if member.islnk():  # hard links name an earlier member of the archive
        return _relative(member.linkname, output)
    if member.linkname.startswith("/"):
        return None
    target = posixpath.normpath(posixpath.join(posixpath.dirname(rel), member.linkname))
    if target == ".." or target.startswith("../"):
        return None
    return target


def _materialise(
    links: list[tuple[str, str]],
    out: Path,
    output: str,
    caps: OutputCaps,
    entries: int,
    refusals: list[str],
) -> int:
    """Replace in-output links by copies of what they name (links to links resolve in turn);
    a folder's copy counts its entries against the caps before it is made."""
    made = 0
    pending = links
    for _ in range(8):
        waiting = []
        for rel, target in pending:
            src = out / target
            if src.is_file():
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, out / rel)
                made += 1
            elif src.is_dir() and target != "." and not (rel + "/").startswith(target + "/"):
                depth = rel.count("/") + 1
                entries += _walk_within(src, output, caps, caps.files - entries, depth)
                shutil.copytree(src, out / rel, dirs_exist_ok=True)
                made += 1
            else:
                waiting.append((rel, target))
        if len(waiting) == len(pending):
            break
        pending = waiting
    for rel, target in pending:
        refusals.append(
            f"{posixpath.join(output, rel)}: link to {target} names nothing in the output"
        )
    return made
