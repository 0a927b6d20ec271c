"""Reliability statistics (DESIGN §7): outcome counts and rates, tries, retries and harness
failures, per release, per entry and per case. Pure functions.

An attempt slot keeps one record, its last try; ``try_index + 1`` is its number of tries.
Only harness failures are retried, so every try before the last one failed that way.
Withdrawn attempts are counted apart (``withdrawn``) and in no other number.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from recon.model import Reliability, ReliabilityReport


@dataclass(frozen=True)
class Slot:
    """One attempt of a release as the statistics see it."""

    id: str
    entry: str
    case: str
    outcome: str  # the record's outcome (of its last try)
    tries: int
    withdrawn: bool

    @property
    def harness_failures(self) -> int:
        return self.tries - 1 + (1 if self.outcome == "harness_failure" else 0)


def reliability(slots: Iterable[Slot]) -> Reliability:
    mine = list(slots)
    counted = [s for s in mine if not s.withdrawn]
    outcomes = Counter(s.outcome for s in counted)
    tries = sum(s.tries for s in counted)
    failures = sum(s.harness_failures for s in counted)
    n = len(counted)
    return Reliability(
        attempts=n,
        by_outcome=dict(sorted(outcomes.items())),
        rates={k: v / n for k, v in sorted(outcomes.items())},
        tries=tries,
        retries=tries - n,
        harness_failures=failures,
        harness_failure_rate=failures / tries if tries else None,
        withdrawn=len(mine) - n,
    )


def _by(
    slots: list[Slot], key: Callable[[Slot], str], names: Iterable[str]
) -> dict[str, Reliability]:
    return {name: reliability(s for s in slots if key(s) == name) for name in sorted(names)}


def report(
    slots: Iterable[Slot], entries: Iterable[str], cases: Iterable[str]
) -> ReliabilityReport:
    mine = list(slots)
    return ReliabilityReport(
        overall=reliability(mine),
        entries=_by(mine, lambda s: s.entry, entries),
        cases=_by(mine, lambda s: s.case, cases),
    )
