"""A build output as the harness takes it in: one rule on every backend (DESIGN §5.1).

Both backends hand the output folder over as a tar archive, and one function,
``unpack_output``, judges it: the docker backend streams the folder out of the container
(GNU tar, after ``find`` checked the caps in the container); the native backend archives
its folder on the host with ``take_folder`` (``check_tree`` first checks the caps in place;
no link is followed; names travel as bytes). Whatever the Candidate left, the answer is a
clean folder of plain files and folders, or ``OutputRefused``; never another exception.

Normalised: a symbolic or hard link whose target lies inside the output becomes a copy of
what it names, a link to a folder a copy of that folder's tree. Links to links and links
through linked folders resolve as the kernel would resolve them. Copies count against the
caps. A file keeps only its executable bit (mode 0755 or 0644).

Refused (the attempt is ``ungradeable``; its reason names the first refused path, and its
record's ``refusals`` list every one, at most ``MAX_REFUSALS``; paths are shown escaped,
bytes that are not UTF-8 and control characters as ``\\xNN``):

- a name that is not valid UTF-8, or holds a control character (C0, DEL or C1: unsafe in
  URLs, logs and one-line reasons downstream);
- a FIFO, a character or block device, a socket, or any type but file, folder and link;
- a link that is absolute, leads outside the output, names nothing, or makes a cycle (more
  than ``MAX_HOPS`` links in one resolution, or a link to a folder that holds the link);
- a file over the per-file cap, or one that cannot be read;
- a member outside the output folder, below a file or link, or twice in the archive;
- the output folder itself a link or behind one, or not a folder;
- more than ``output_files`` files and folders, or a path more than ``output_depth`` levels
  below the output folder, copies included. These stop the unpack at once, so a flood
  costs at most one cap's worth of work.

On refusal nothing is kept: ``out`` is removed.
"""

from __future__ import annotations

import bisect
import os
import posixpath
import shutil
import tarfile
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from recon.model import Budget

MAX_REFUSALS = 100
MAX_HOPS = 40  # the kernel's limit on symlinks followed in one path resolution
SPOOL_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class OutputCaps:
    files: int  # files and folders below the output folder
    depth: int  # levels below the output folder
    file_bytes: int  # per file

    @classmethod
    def of(cls, budget: Budget, file_bytes: int) -> OutputCaps:
        return cls(budget.output_files, budget.output_depth, file_bytes)


class OutputRefused(Exception):
    """The output is refused: ``reason`` for the attempt, ``refusals`` for its record."""

    def __init__(self, reason: str, refusals: list[str]) -> None:
        super().__init__(reason)
        self.reason = reason
        self.refusals = refusals


def refused(refusals: Sequence[str]) -> OutputRefused:
    """The refusal of an output for ``refusals`` (at least one), the first in the reason."""
    more = len(refusals) - 1
    reason = f"the build output was refused: {refusals[0]}"
    if more:
        reason += f" (and {more} more)"
    kept = list(refusals[:MAX_REFUSALS])
    if len(refusals) > MAX_REFUSALS:
        kept.append(f"{len(refusals) - MAX_REFUSALS} more refusals not listed")
    return OutputRefused(reason, kept)


def too_many(output: str, caps: OutputCaps) -> OutputRefused:
    n = caps.files
    return OutputRefused(
        f"the build output has more than {n} files and folders (budget.output_files)",
        [f"{output}: more than {n} files and folders; budget.output_files is {n}"],
    )


def too_deep(output: str, caps: OutputCaps) -> OutputRefused:
    n = caps.depth
    return OutputRefused(
        f"the build output is more than {n} levels deep (budget.output_depth)",
        [f"{output}: a path more than {n} levels deep; budget.output_depth is {n}"],
    )


def shown(path: str) -> str:
    """``path`` safe to print: bytes that are not UTF-8 and unprintable characters escaped."""
    text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def name_problem(path: str) -> str | None:
    """Why ``path`` (as decoded with surrogateescape) is no name for the output, if it is not."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "name is not valid UTF-8"
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in path):
        return "name holds a control character"
    return None


# -- the output folder in place (the native backend) ------------------------------------


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


# -- the one way in: an archive of the output folder ------------------------------------


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


@dataclass
class _Listing:
    """What the archive holds below the output folder, by path relative to it."""

    kinds: dict[str, str] = field(default_factory=lambda: {"": "dir"})  # dir, file or link
    links: dict[str, tuple[str, bool]] = field(default_factory=dict)  # linkname, hard
    entries: int = 0


def _unpack(
    tar: tarfile.TarFile, output: str, out: Path, caps: OutputCaps, refusals: list[str]
) -> int:
    listing = _Listing()
    for member in tar:
        rel = _relative(member.name, output)
        if rel is None:
            refusals.append(f"{shown(member.name)}: path outside the output folder")
            continue
        if rel == "":
            continue
        listing.entries += 1
        if listing.entries > caps.files:
            raise too_many(output, caps)
        if _depth(rel) > caps.depth:
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
    targets = _resolve_links(listing, output, refusals)
    if refusals:
        raise refused(refusals)
    return _Copies(listing, targets, output, caps).make(out)


def _member_problem(
    member: tarfile.TarInfo, rel: str, kinds: dict[str, str], caps: OutputCaps
) -> str | None:
    problem = name_problem(rel)
    if problem is not None:
        return problem
    if any(kinds.get(parent, "dir") != "dir" for parent in _parents(rel)):
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


def _note(listing: _Listing, member: tarfile.TarInfo, rel: str) -> None:
    for parent in _parents(rel):
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


def _relative(name: str, output: str) -> str | None:
    """``name`` relative to the output folder ("" for the folder), None when outside it."""
    if name.startswith("/") or ".." in name.split("/"):
        return None
    name = posixpath.normpath(name)
    if name == output:
        return ""
    if name.startswith(output + "/"):
        return name[len(output) + 1 :]
    return None


def _depth(rel: str) -> int:
    return rel.count("/") + 1


def _parents(rel: str) -> Iterator[str]:
    parent = posixpath.dirname(rel)
    while parent:
        yield parent
        parent = posixpath.dirname(parent)


# -- links: resolved within the output, then copied -------------------------------------


class _BadLink(Exception):
    pass


def _resolve_links(listing: _Listing, output: str, refusals: list[str]) -> dict[str, str]:
    """Every link's target, a real file or folder of the output; the others refused."""
    targets: dict[str, str] = {}
    for rel, (linkname, _) in sorted(listing.links.items()):
        try:
            targets[rel] = _resolve(rel, listing, output)
        except _BadLink as bad:
            path = shown(posixpath.join(output, rel))
            refusals.append(f"{path}: link to {shown(linkname)} {bad}")
    return targets


def _resolve(rel: str, listing: _Listing, output: str) -> str:
    """What the link ``rel`` names, followed component by component as the kernel would."""
    linkname, hard = listing.links[rel]
    if hard:
        start = _relative(linkname, output)
        if start is None:
            raise _BadLink("leads outside the output")
        parts, done = start.split("/"), []
    elif linkname.startswith("/"):
        raise _BadLink("is absolute")
    else:
        parts, done = linkname.split("/"), rel.split("/")[:-1]
    hops = 0
    while parts:
        part = parts.pop(0)
        if part in ("", "."):
            continue
        if part == "..":
            if not done:
                raise _BadLink("leads outside the output")
            done.pop()
            continue
        here = "/".join([*done, part])
        kind = listing.kinds.get(here)
        if kind is None or (kind == "file" and any(p not in ("", ".") for p in parts)):
            raise _BadLink("names nothing in the output")
        if kind == "link":
            hops += 1
            if hops > MAX_HOPS:
                raise _BadLink("makes a cycle")
            name, is_hard = listing.links[here]
            if is_hard:
                parts, done = [*(_relative(name, output) or "..").split("/"), *parts], []
            elif name.startswith("/"):
                raise _BadLink("is absolute")
            else:
                parts = [*name.split("/"), *parts]
            continue
        done.append(part)
    return "/".join(done)


@dataclass(frozen=True)
class _Size:
    entries: int  # files and folders below a folder, links copied
    files: int
    height: int  # levels of the deepest of them


class _Copies:
    """The output once its links are copies: sized first (cycles and caps refused before
    anything is copied), then made, each folder's own links before the folder is copied."""

    def __init__(
        self, listing: _Listing, targets: dict[str, str], output: str, caps: OutputCaps
    ) -> None:
        self.kinds = listing.kinds
        self.linkname = {rel: name for rel, (name, _) in listing.links.items()}
        self.targets = targets
        self.names = sorted(k for k in self.kinds if k)
        self.output = output
        self.caps = caps
        self.sizes: dict[str, _Size] = {}
        self.open: list[str] = []
        self.made: set[str] = set()

    def make(self, out: Path) -> int:
        size = self._size("")
        if size.height > self.caps.depth:
            raise too_deep(self.output, self.caps)
        for rel in sorted(self.targets):
            self._place(out, rel)
        return size.files

    def _below(self, folder: str) -> list[str]:
        if not folder:
            return self.names
        lo = bisect.bisect_left(self.names, folder + "/")
        hi = bisect.bisect_left(self.names, folder + "0")  # "0" sorts right after "/"
        return self.names[lo:hi]

    def _size(self, folder: str) -> _Size:
        if folder in self.sizes:
            return self.sizes[folder]
        if len(self.open) > self.caps.depth:  # each nested copy lies a level deeper
            raise too_deep(self.output, self.caps)
        self.open.append(folder)
        entries = files = height = 0
        base = _depth(folder) if folder else 0
        for rel in self._below(folder):
            depth = _depth(rel) - base
            entries, height = entries + 1, max(height, depth)
            target = self.targets.get(rel, rel)
            if self.kinds.get(target) == "file":
                files += 1
            elif rel in self.targets:
                if target in self.open:
                    path = shown(posixpath.join(self.output, rel))
                    raise refused([f"{path}: link to {shown(self.linkname[rel])} makes a cycle"])
                inner = self._size(target)
                entries, files = entries + inner.entries, files + inner.files
                height = max(height, depth + inner.height)
            if entries > self.caps.files:
                raise too_many(self.output, self.caps)
        self.open.pop()
        self.sizes[folder] = _Size(entries, files, height)
        return self.sizes[folder]

    def _place(self, out: Path, rel: str) -> None:
        if rel in self.made:
            return
        target = self.targets[rel]
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if self.kinds[target] == "file":
            shutil.copy(out / target, dest)
        else:
            for inner in self._below(target):
                if inner in self.targets:
                    self._place(out, inner)
            shutil.copytree(out / target, dest)
        self.made.add(rel)
