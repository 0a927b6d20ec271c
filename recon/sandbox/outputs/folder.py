"""The native backend's side: its output folder checked in place, archived as GNU tar would
archive it (no link followed, names as bytes, sockets refused), then ``unpack_output``; and
what GNU tar, the docker backend's archiver, left out."""

from __future__ import annotations

import os
import posixpath
import tarfile
import tempfile
from pathlib import Path

from recon.sandbox.outputs.refusals import OutputCaps, refused, shown, too_deep, too_many
from recon.sandbox.outputs.unpack import unpack_output

SPOOL_BYTES = 16 * 1024 * 1024


def output_folder(workspace: Path, output: str) -> Path | None:
    """``workspace``'s output folder, None when there is none; refused when it is a link or
    lies behind one, or is not a folder (the docker backend checks the same in the container)."""
    output = posixpath.normpath(output)
    path = workspace / output
    if not os.path.lexists(path):
        return None
    if os.path.realpath(path) != os.path.join(os.path.realpath(workspace), output):
        raise refused([f"{output}: the output folder is a symlink or lies behind one"])
    if not path.is_dir():
        raise refused([f"{output}: the output is not a folder"])
    return path


def check_tree(root: Path, output: str, caps: OutputCaps) -> None:
    """Raise ``OutputRefused`` when the folder ``root`` breaks a cap (stops early). Links
    are not followed; a folder that cannot be read is left to the archive to refuse."""
    seen = 0
    stack = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        for entry in _scan(folder):
            seen += 1
            if seen > caps.files:
                raise too_many(output, caps)
            if depth + 1 > caps.depth:
                raise too_deep(output, caps)
            if entry.is_dir(follow_symlinks=False):
                stack.append((Path(entry.path), depth + 1))


def _scan(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as entries:
            return sorted(entries, key=lambda e: e.name)
    except OSError:
        return []


def take_folder(folder: Path, output: str, out: Path, caps: OutputCaps) -> int:
    """The native backend's way in: ``folder`` checked against the caps, archived as GNU
    tar would archive it (links as links, sockets refused), then ``unpack_output``."""
    output = posixpath.normpath(output)
    check_tree(folder, output, caps)
    refusals: list[str] = []
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
        with tarfile.open(fileobj=spool, mode="w", format=tarfile.GNU_FORMAT) as tar:
            _archive(tar, folder, output, refusals)
        spool.seek(0)
        with tarfile.open(fileobj=spool, mode="r:") as tar:
            return unpack_output(tar, output, out, caps, refusals)


def _archive(tar: tarfile.TarFile, folder: Path, arcname: str, refusals: list[str]) -> None:
    tar.addfile(tar.gettarinfo(str(folder), arcname))
    stack = [(folder, arcname)]
    while stack:
        path, arc = stack.pop()
        try:
            with os.scandir(path) as scan:
                items = sorted(scan, key=lambda e: e.name)
        except OSError as err:
            refusals.append(f"{shown(arc)}: cannot be read ({err.strerror})")
            continue
        for item in items:
            name = f"{arc}/{item.name}"
            if _add(tar, item.path, name, refusals):
                stack.append((Path(item.path), name))


def _add(tar: tarfile.TarFile, path: str, name: str, refusals: list[str]) -> bool:
    """Archive one entry (not following a link); True when it is a folder to walk."""
    try:
        info = tar.gettarinfo(path, name)
        if info is None:  # tarfile, like GNU tar, cannot archive a socket
            refusals.append(f"{shown(name)}: socket refused")
            return False
        if info.isreg():
            with open(path, "rb") as data:
                tar.addfile(info, data)
        else:
            tar.addfile(info)
    except OSError as err:
        refusals.append(f"{shown(name)}: cannot be read ({err.strerror})")
        return False
    return info.isdir()


def not_archived(errors: bytes) -> list[str]:
    """What GNU tar (the docker backend's archiver) left out, from its messages, as
    refusals; a socket worded as ``take_folder`` words it."""
    refusals = []
    for line in errors.decode(errors="backslashreplace").splitlines():
        line = line.removeprefix("tar: ")
        if line.endswith(": socket ignored"):
            refusals.append(line.removesuffix(" ignored") + " refused")
        else:
            refusals.append(f"not archived: {line}")
    return refusals
