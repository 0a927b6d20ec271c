"""The live progress of a release build (``store/state/progress/<release>.json``).

Written atomically by the build (the coordinator) as cells start and finish, read by
``recon status <release>`` from another shell: one file is one consistent snapshot.
"""

from __future__ import annotations

from pydantic import Field

from recon.model.base import Strict, Versioned


class KindCounts(Strict):
    """The cells of one kind: ``done`` = ran + reused + up to date."""

    total: int = Field(default=0, ge=0)
    ran: int = Field(default=0, ge=0)  # computed in this build
    reused: int = Field(default=0, ge=0)  # found in the action cache (this or another release)
    uptodate: int = Field(default=0, ge=0)  # doit found nothing changed: not even looked up
    running: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)
    seconds: float = Field(default=0.0, ge=0)  # summed compute time of the cells that ran
    lost: int = Field(default=0, ge=0)  # runs whose worker or node died under them
    resubmitted: int = Field(default=0, ge=0)  # of those, submitted again at once

    @property
    def done(self) -> int:
        return self.ran + self.reused + self.uptodate

    @property
    def pending(self) -> int:
        return max(0, self.total - self.done - self.running - self.failed)


class EntryAttempts(Strict):
    """One entry's attempts: finished ones by outcome (``retry`` = a harness failure that
    runs again), running, failed (the cell itself failed) and pending."""

    total: int = Field(default=0, ge=0)
    running: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)
    outcomes: dict[str, int] = Field(default_factory=dict)

    @property
    def pending(self) -> int:
        return max(0, self.total - sum(self.outcomes.values()) - self.running - self.failed)


class WaitingCell(Strict):
    """A cell that no live node of the cluster can run: what it needs, what the cluster's
    live nodes offer (summed), and since when (unix seconds) it has waited."""

    needs: dict[str, float] = Field(default_factory=dict)
    offers: dict[str, float] = Field(default_factory=dict)
    nodes: int = Field(default=0, ge=0)
    since: float = 0.0


class BuildProgress(Versioned):
    release: str
    pid: int
    host: str
    executor: str
    started: float  # unix seconds
    updated: float
    finished: bool = False
    ok: bool | None = None  # set when finished: no cell failed
    kinds: dict[str, KindCounts] = Field(default_factory=dict)
    entries: dict[str, EntryAttempts] = Field(default_factory=dict)
    concurrency: int = Field(default=0, ge=0)  # most cells seen running at once
    rate: float = Field(default=0.0, ge=0)  # cells ran or reused per second so far
    eta_s: float | None = None  # None until a cell of the kinds still pending has run, and
    # while a cell waits for resources
    waiting: dict[str, WaitingCell] = Field(default_factory=dict)  # cell id -> what it needs

    def totals(self) -> KindCounts:
        """Every kind's counts summed."""
        names = ("total", "ran", "reused", "uptodate", "running", "failed", "seconds", "lost",
                 "resubmitted")  # fmt: skip
        return KindCounts(**{n: sum(getattr(c, n) for c in self.kinds.values()) for n in names})
