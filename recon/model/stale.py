"""``releases/<id>/stale.json``: the last build of a release failed, so what is published
there is older than its inputs (issue 27, item 3).

Written beside the published files when a build of the release ends with a failed cell,
and gone with the next successful publish, which replaces the whole folder. It is never
part of the manifest or the release JSON: those stay the bytes a build of the same inputs
gives.
"""

from __future__ import annotations

from pydantic import Field

from recon.model.base import Strict, Versioned
from recon.model.values import Id


class FailedCell(Strict):
    """A cell (or ``release:<id>``) that failed, and the first line of its error."""

    cell: str = Field(min_length=1, max_length=300)
    error: str = Field(max_length=2000)


class StaleMark(Versioned):
    release: Id
    at: str  # UTC, ISO 8601: when the failed build ended
    failed: list[FailedCell] = Field(min_length=1, max_length=100_000)
    commit: str | None = None  # the project's git commit, when it is a git checkout
