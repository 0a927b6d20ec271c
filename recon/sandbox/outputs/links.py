"""Links inside the output: resolved as the kernel resolves them, sized against the caps
(cycles refused) before anything is copied, then made into copies."""

from __future__ import annotations

import bisect
import posixpath
import shutil
from dataclasses import dataclass
from pathlib import Path

from recon.sandbox.outputs.listing import Listing, depth, relative
from recon.sandbox.outputs.refusals import OutputCaps, refused, shown, too_deep, too_many

MAX_HOPS = 40  # the kernel's limit on symlinks followed in one path resolution


class _BadLink(Exception):
    pass


def resolve_links(listing: Listing, output: str, refusals: list[str]) -> dict[str, str]:
    """Every link's target, a real file or folder of the output; the others refused."""
    targets: dict[str, str] = {}
    for rel, (linkname, _) in sorted(listing.links.items()):
        try:
            targets[rel] = _resolve(rel, listing, output)
        except _BadLink as bad:
            path = shown(posixpath.join(output, rel))
            refusals.append(f"{path}: link to {shown(linkname)} {bad}")
    return targets


def _resolve(rel: str, listing: Listing, output: str) -> str:
    """What the link ``rel`` names, followed component by component as the kernel would."""
    linkname, hard = listing.links[rel]
    if hard:
        start = relative(linkname, output)
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
                parts, done = [*(relative(name, output) or "..").split("/"), *parts], []
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


class Copies:
    """The output once its links are copies: sized first (cycles and caps refused before
    anything is copied), then made, each folder's own links before the folder is copied."""

    def __init__(
        self, listing: Listing, targets: dict[str, str], output: str, caps: OutputCaps
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
        base = depth(folder) if folder else 0
        for rel in self._below(folder):
            level = depth(rel) - base
            entries, height = entries + 1, max(height, level)
            target = self.targets.get(rel, rel)
            if self.kinds.get(target) == "file":
                files += 1
            elif rel in self.targets:
                if target in self.open:
                    path = shown(posixpath.join(self.output, rel))
                    raise refused([f"{path}: link to {shown(self.linkname[rel])} makes a cycle"])
                inner = self._size(target)
                entries, files = entries + inner.entries, files + inner.files
                height = max(height, level + inner.height)
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
