"""What refusing an output says: the caps, ``OutputRefused`` and how paths are shown."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from recon.model import Budget

MAX_REFUSALS = 100


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
