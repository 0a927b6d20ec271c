"""The one way in: an archive of the output folder unpacked as plain files and folders."""

from __future__ import annotations

import posixpath
import shutil
import tarfile
from collections.abc import Sequence
from pathlib import Path

from recon.sandbox.outputs.links import Copies, resolve_links
from recon.sandbox.outputs.listing import Listing, depth, parents, relative
from recon.sandbox.outputs.refusals import (
    OutputCaps,
    name_problem,
    refused,
    shown,
    too_deep,
    too_many,
)


def unpack_output(
    tar: tarfile.TarFile, output: str, out: Path, caps: OutputCaps, refusals: Sequence[str] = ()
) -> int:
    """Unpack the members under ``output/`` into ``out`` (created here) as plain files and
    folders, links copied, and return how many files it holds. ``refusals``: what the
    archiving side already refused. Anything refused: ``out`` removed, ``OutputRefused``."""
    output = posixpath.normpath(output)
    out.mkdir(parents=True)
    try:
        return _unpack(tar, output, out, caps, list(refusals))
    except Exception:
        shutil.rmtree(out, ignore_errors=True)
        raise


def _unpack(
    tar: tarfile.TarFile, output: str, out: Path, caps: OutputCaps, refusals: list[str]
) -> int:
    listing = Listing()
    for member in tar:
        rel = relative(member.name, output)
        if rel is None:
            refusals.append(f"{shown(member.name)}: path outside the output folder")
            continue
        if rel == "":
            continue
        listing.entries += 1
        if listing.entries > caps.files:
            raise too_many(output, caps)
        if depth(rel) > caps.depth:
            raise too_deep(output, caps)
        why = _member_problem(member, rel, listing.kinds, caps)
        if why is not None:
            refusals.append(f"{shown(posixpath.join(output, rel))}: {why}")
            continue
        _note(listing, member, rel)
        if member.isreg() and not refusals:
            _write(tar, member, out / rel)
        elif member.isdir() and not refusals:
            (out / rel).mkdir(parents=True, exist_ok=True)
    targets = resolve_links(listing, output, refusals)
    if refusals:
        raise refused(refusals)
    return Copies(listing, targets, output, caps).make(out)


def _member_problem(
    member: tarfile.TarInfo, rel: str, kinds: dict[str, str], caps: OutputCaps
) -> str | None:
    problem = name_problem(rel)
    if problem is not None:
        return problem
    if any(kinds.get(parent, "dir") != "dir" for parent in parents(rel)):
        return "lies below a file or a link"
    if rel in kinds and not (member.isdir() and kinds[rel] == "dir"):
        return "appears twice in the archive"
    if member.isreg():
        if member.size > caps.file_bytes:
            return f"{member.size} bytes is over the per-file cap of {caps.file_bytes}"
        return None
    if member.isdir() or member.issym() or member.islnk():
        return None
    if member.ischr() or member.isblk():
        return "device file refused"
    if member.isfifo():
        return "fifo refused"
    return f"unsupported file type {member.type!r} refused"


def _note(listing: Listing, member: tarfile.TarInfo, rel: str) -> None:
    for parent in parents(rel):
        listing.kinds.setdefault(parent, "dir")
    if member.issym() or member.islnk():
        listing.kinds[rel] = "link"
        listing.links[rel] = (member.linkname, member.islnk())
    else:
        listing.kinds[rel] = "dir" if member.isdir() else "file"


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, dest: Path) -> None:
    src = tar.extractfile(member)
    assert src is not None
    dest.parent.mkdir(parents=True, exist_ok=True)
    with dest.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    dest.chmod(0o755 if member.mode & 0o111 else 0o644)
