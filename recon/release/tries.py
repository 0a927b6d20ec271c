"""The tries of each attempt slot of a release, for ``recon diff`` (issue 29).

A release JSON names each slot's final record and how many tries it took; the records of
its earlier tries are in the store, each try's record naming the one it replaces
(``retry_of``). :func:`tries_of` walks that chain with a ``read`` function (pure: no store
here); :func:`store_reader` is the store's, or one that finds nothing when there is none.
A record the store no longer holds is a try whose outcome is unknown, never an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recon.errors import ReconError
from recon.model.result import AttemptSummary, ReleaseResult
from recon.project.settings import Settings

Read = Callable[[str], Mapping[str, Any] | None]
"""A record digest -> the record's JSON, or None when it cannot be read."""


@dataclass(frozen=True)
class TryLine:
    """One try of a slot: its index (0 first), outcome and reason (None and a note when its
    record is gone), its record, and whether a later try retried it."""

    index: int
    outcome: str | None
    reason: str
    record: str
    retried: bool = False


Tries = Mapping[str, Sequence[TryLine]]
"""Attempt id -> its tries, the first first."""


def slot_tries(summary: AttemptSummary, read: Read) -> tuple[TryLine, ...]:
    """The slot's tries: the final one as the release JSON says, then back along
    ``retry_of`` for the ``tries - 1`` before it."""
    last = summary.tries - 1
    lines = [TryLine(last, summary.outcome, summary.reason, summary.record)]
    digest = summary.retry_of
    for index in range(last - 1, -1, -1):
        if digest is None:
            break
        found = read(digest)
        if found is None:
            lines.append(TryLine(index, None, "(its record is not in the store)", digest, True))
            break
        lines.append(TryLine(index, found.get("outcome"), found.get("reason", ""), digest, True))
        digest = found.get("retry_of")
    return tuple(reversed(lines))


def tries_of(result: ReleaseResult, read: Read) -> dict[str, tuple[TryLine, ...]]:
    return {s.id: slot_tries(s, read) for s in result.attempts}


def store_reader(project_root: Path, settings: Settings) -> Read:
    """Reads records from the project's store; finds nothing when there is no store."""
    from recon.project.loader import Project

    try:
        store = Project.open(project_root, settings).store()
    except (ReconError, OSError):
        return lambda digest: None

    def read(digest: str) -> Mapping[str, Any] | None:
        try:
            found = store.read_json(digest)
        except (ReconError, OSError):
            return None
        return found if isinstance(found, dict) else None

    return read
