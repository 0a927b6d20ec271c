"""What an archive holds below the output folder, by path relative to it."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Listing:
    """What the archive holds below the output folder, by path relative to it."""

    kinds: dict[str, str] = field(default_factory=lambda: {"": "dir"})  # dir, file or link
    links: dict[str, tuple[str, bool]] = field(default_factory=dict)  # linkname, hard
    entries: int = 0


def relative(name: str, output: str) -> str | None:
    """``name`` relative to the output folder ("" for the folder), None when outside it."""
    if name.startswith("/") or ".." in name.split("/"):
        return None
    name = posixpath.normpath(name)
    if name == output:
        return ""
    if name.startswith(output + "/"):
        return name[len(output) + 1 :]
    return None


def depth(rel: str) -> int:
    return rel.count("/") + 1


def parents(rel: str) -> Iterator[str]:
    parent = posixpath.dirname(rel)
    while parent:
        yield parent
        parent = posixpath.dirname(parent)
