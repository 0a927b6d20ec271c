"""Aggregation by the fixed policy of DESIGN §7 (rule ``case-mean-v1``).

Valid attempts are averaged within each active case; every active case weighs the same;
an entry is ranked only when it has a valid attempt on every active case. Missing,
ungradeable, timed-out, withdrawn and harness-failed attempts stay listed but never
enter a score; harness failures are counted in the reliability statistics.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from recon.model import (
    AttemptRecord,
    AttemptSummary,
    CaseScore,
    DimensionSummary,
    Entry,
    EntryResult,
    ReleaseDef,
    ReleaseResult,
    Reliability,
    public_terms,
)


@dataclass(frozen=True)
class Graded:
    """One attempt with its record and, when valid, its grade table."""

    id: str
    record: AttemptRecord
    record_digest: str
    grade: dict[str, Any] | None


def aggregate(
    release: ReleaseDef, entries: dict[str, Entry], attempts: Sequence[Graded]
) -> ReleaseResult:
    active = list(release.cases)
    results = [_entry_result(entries[e], active, attempts) for e in release.entries]
    ranked = sorted((r for r in results if r.ranked), key=lambda r: (-(r.score or 0.0), r.entry))
    ranks: dict[str, int] = {}
    for position, result in enumerate(ranked, start=1):
        previous = ranked[position - 2] if position > 1 else None
        same = previous is not None and previous.score == result.score
        ranks[result.entry] = ranks[previous.entry] if same and previous else position
    ordered = ranked + sorted((r for r in results if not r.ranked), key=lambda r: r.entry)
    final = [r.model_copy(update={"rank": ranks.get(r.entry)}) for r in ordered]
    outcomes = Counter(a.record.outcome for a in attempts)
    protocol = release.protocol
    note = (
        "Formal release: every attempt ran in the docker sandbox."
        if protocol.formal
        else f"Non-formal: protocol {protocol.name} runs attempts on the {protocol.backend} "
        "backend, for development only; these scores are not formal results."
    )
    return ReleaseResult(
        release=release.id,
        title=release.title,
        protocol=protocol.name,
        formal=protocol.formal,
        formal_note=note,
        aggregation=release.aggregation.rule,
        active_cases=active,
        entries=final,
        attempts=[_summary(a) for a in sorted(attempts, key=lambda a: a.id)],
        reliability=Reliability(
            attempts=len(attempts),
            by_outcome=dict(sorted(outcomes.items())),
            harness_failure_rate=(outcomes["harness_failure"] / len(attempts)) if attempts else 0.0,
        ),
    )


def _entry_result(entry: Entry, active: list[str], attempts: Sequence[Graded]) -> EntryResult:
    cases = [_case_score(entry.id, case, attempts) for case in active]
    covered = sum(1 for c in cases if c.mean is not None)
    ranked = covered == len(active)
    score = sum(c.mean for c in cases if c.mean is not None) / len(active) if ranked else None
    return EntryResult(
        entry=entry.id,
        model=f"{entry.model.provider}/{entry.model.name}@{entry.model.version}",
        agent=f"{entry.agent.name}@{entry.agent.version}",
        rank=None,
        ranked=ranked,
        score=score,
        covered=covered,
        cases=cases,
    )


def _case_score(entry: str, case: str, attempts: Sequence[Graded]) -> CaseScore:
    mine = sorted(
        (a for a in attempts if a.record.entry == entry and a.record.case == case),
        key=lambda a: a.record.index,
    )
    totals = [_total(a) for a in mine]
    valid = [t for t in totals if t is not None]
    return CaseScore(
        case=case,
        attempts=dict(sorted(Counter(a.record.outcome for a in mine).items())),
        valid=len(valid),
        mean=sum(valid) / len(valid) if valid else None,
        per_attempt=totals,
    )


def _total(attempt: Graded) -> float | None:
    if attempt.record.outcome != "valid" or attempt.grade is None:
        return None
    return float(attempt.grade["total"])


def _summary(attempt: Graded) -> AttemptSummary:
    rec = attempt.record
    return AttemptSummary(
        id=attempt.id,
        entry=rec.entry,
        case=rec.case,
        index=rec.index,
        outcome=rec.outcome,
        reason=rec.reason,
        formal=rec.formal,
        total=_total(attempt),
        dimensions=_dimensions(attempt.grade or {}),
        trace=rec.trace,
        record=attempt.record_digest,
    )


def _dimensions(grade: dict[str, Any]) -> dict[str, DimensionSummary]:
    """Each dimension's value and its allow-listed terms. The grade table's arithmetic
    (weights and products) and every other term stay in the store (DESIGN §5.3)."""
    terms = grade.get("terms", {})
    return {
        name: DimensionSummary(value=value, terms=public_terms(name, terms.get(name, {})))
        for name, value in sorted(grade.get("dimensions", {}).items())
    }
