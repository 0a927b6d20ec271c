"""Aggregation by the fixed policy of DESIGN §7 (rule ``case-mean-v1``).

Valid attempts are averaged within each active case; every active case weighs the same;
an entry is ranked only when it has a valid attempt on every active case. Missing,
ungradeable, timed-out and harness-failed attempts stay listed but never enter a score;
withdrawn attempts (manually, or automatically when their run conditions differ from the
release's: :mod:`recon.release.withdrawn`) enter no denominator at all, and each
withdrawal is published with its effect on every denominator. Scores carry standard
errors, bootstrap intervals and tie bands (:mod:`recon.release.uncertainty`); reliability
counts every try (:mod:`recon.release.reliability`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from recon.model import (
    Active,
    AttemptRecord,
    AttemptSummary,
    CaseScore,
    DimensionSummary,
    Entry,
    EntryRecord,
    EntryResult,
    Estimate,
    Outcome,
    ReleaseDef,
    ReleaseResult,
    Sidecar,
    Trace,
    Uncertainty,
    public_terms,
)
from recon.model.grading import DIMENSIONS
from recon.release import reliability, uncertainty, withdrawn
from recon.release.checks import public_checks
from recon.release.reliability import Slot


@dataclass(frozen=True)
class Graded:
    """One attempt with its record and, when valid, its grade table."""

    id: str
    record: AttemptRecord
    record_digest: str
    grade: dict[str, Any] | None


@dataclass(frozen=True)
class Conditions:
    """What the release expects: its protocol digest, the image cell output of each backend,
    and per entry its digest and skill digest."""

    protocol_digest: str
    images: Mapping[str, str]
    entries: Mapping[str, str]
    skills: Mapping[str, str | None] = field(default_factory=dict)

    def expected(self, release: ReleaseDef, entry: Entry) -> dict[str, str | None]:
        return {
            "protocol": release.protocol.name,
            "protocol digest": self.protocol_digest,
            "image digest": self.images.get(entry.sandbox.backend),
            "entry digest": self.entries.get(entry.id),
            "evidence condition": entry.evidence_condition,
        }


@dataclass(frozen=True)
class Aggregated:
    result: ReleaseResult
    sidecars: dict[str, Sidecar]  # attempt id -> its automatic withdrawal


@dataclass(frozen=True)
class _Scope:
    release: ReleaseDef
    attempts: Sequence[Graded]
    withdrawn: Collection[str]

    def counted(self, entry: str, case: str) -> list[Graded]:
        mine = [a for a in self.attempts if (a.record.entry, a.record.case) == (entry, case)]
        return sorted(mine, key=lambda a: a.record.index)

    def outcome(self, attempt: Graded) -> Outcome:
        return "withdrawn" if attempt.id in self.withdrawn else attempt.record.outcome

    def total(self, attempt: Graded) -> float | None:
        if self.outcome(attempt) != "valid" or attempt.grade is None:
            return None
        return float(attempt.grade["total"])


def aggregate(
    release: ReleaseDef,
    entries: Mapping[str, Entry],
    attempts: Sequence[Graded],
    conditions: Conditions,
    withdrawals: Sequence[Active] = (),
) -> Aggregated:
    """The release JSON of ``attempts``, and the sidecars of its automatic withdrawals."""
    plain = [_plain(a) for a in attempts]
    auto = _automatic(release, entries, attempts, conditions)
    scope = _Scope(release, attempts, withdrawn.applied(plain, withdrawals, auto))
    results = [_entry_result(scope, entries[e], conditions) for e in release.entries]
    slots = [_slot(scope, a) for a in attempts]
    boot = release.aggregation.bootstrap
    return Aggregated(
        ReleaseResult(
            release=release.id,
            title=release.title,
            protocol=release.protocol.name,
            formal=release.protocol.formal,
            formal_note=_note(release),
            aggregation=release.aggregation.rule,
            active_cases=list(release.cases),
            entries=_ranked(results),
            attempts=[_summary(scope, a) for a in sorted(attempts, key=lambda a: a.id)],
            reliability=reliability.report(slots, release.entries, release.cases),
            uncertainty=Uncertainty(seed=boot.seed, resamples=boot.resamples),
            withdrawals=withdrawn.listing(plain, withdrawals, auto, len(release.cases)),
        ),
        auto,
    )


def _automatic(
    release: ReleaseDef,
    entries: Mapping[str, Entry],
    attempts: Sequence[Graded],
    conditions: Conditions,
) -> dict[str, Sidecar]:
    """The sidecar of every attempt whose recorded conditions differ from the release's."""
    found = {}
    for a in attempts:
        expected = conditions.expected(release, entries[a.record.entry])
        mismatch = withdrawn.mismatches(a.record, expected)
        if mismatch:
            found[a.id] = withdrawn.automatic(release.id, a.id, a.record_digest, mismatch)
    return found


def _plain(a: Graded) -> withdrawn.Attempt:
    rec = a.record
    valid = rec.outcome == "valid" and a.grade is not None
    return withdrawn.Attempt(a.id, rec.entry, rec.case, valid, a.record_digest, rec.outcome)


def _note(release: ReleaseDef) -> str:
    protocol = release.protocol
    if protocol.formal:
        return "Formal release: every attempt ran in the docker sandbox."
    return (
        f"Non-formal: protocol {protocol.name} runs attempts on the {protocol.backend} "
        "backend, for development only; these scores are not formal results."
    )


def _ranked(results: list[EntryResult]) -> list[EntryResult]:
    """Ranks from the point scores (ties share a rank); tie bands from the intervals."""
    ranked = sorted((r for r in results if r.ranked), key=lambda r: (-(r.score or 0.0), r.entry))
    ranks: dict[str, int] = {}
    for position, result in enumerate(ranked, start=1):
        previous = ranked[position - 2] if position > 1 else None
        same = previous is not None and previous.score == result.score
        ranks[result.entry] = ranks[previous.entry] if same and previous else position
    pairs = [(ranks[r.entry], r.ci or (0.0, 0.0)) for r in ranked]
    bands = dict(zip((r.entry for r in ranked), uncertainty.tie_bands(pairs), strict=True))
    ordered = ranked + sorted((r for r in results if not r.ranked), key=lambda r: r.entry)
    return [
        r.model_copy(update={"rank": ranks.get(r.entry), "band": bands.get(r.entry)})
        for r in ordered
    ]


def _entry_result(scope: _Scope, entry: Entry, conditions: Conditions) -> EntryResult:
    boot = scope.release.aggregation.bootstrap
    active = list(scope.release.cases)
    cases = [_case_score(scope, entry.id, case) for case in active]
    valid = [
        [t for a in scope.counted(entry.id, c) if (t := scope.total(a)) is not None] for c in active
    ]
    ranked = all(valid)
    score = se = ci = None
    dims: dict[str, Estimate] = {}
    if ranked:
        means = [uncertainty.mean(v) for v in valid]
        score = uncertainty.mean(means)
        se = uncertainty.standard_error(means)
        ci = uncertainty.entry_interval(
            valid, uncertainty.rng_for(boot.seed, entry.id), boot.resamples
        )
        dims = _dimensions(scope, entry.id, active)
    return EntryResult(
        entry=entry.id,
        model=f"{entry.model.provider}/{entry.model.name}@{entry.model.version}",
        agent=f"{entry.agent.name}@{entry.agent.version}",
        rank=None,
        ranked=ranked,
        score=score,
        covered=sum(1 for v in valid if v),
        cases=cases,
        se=se,
        ci=ci,
        dimensions=dims,
        record=_record(entry, conditions),
    )


def _dimensions(scope: _Scope, entry: str, active: list[str]) -> dict[str, Estimate]:
    """Per dimension: the case-mean rule applied to its values, with an interval."""
    boot = scope.release.aggregation.bootstrap
    found: dict[str, Estimate] = {}
    for name in DIMENSIONS:
        per_case = [_dimension_values(scope, entry, case, name) for case in active]
        if not all(per_case):
            continue
        means = [uncertainty.mean(v) for v in per_case]
        rng = uncertainty.rng_for(boot.seed, f"{entry}/dimension:{name}")
        found[name] = Estimate(
            mean=uncertainty.mean(means),
            se=uncertainty.standard_error(means),
            ci=uncertainty.entry_interval(per_case, rng, boot.resamples),
        )
    return found


def _dimension_values(scope: _Scope, entry: str, case: str, name: str) -> list[float]:
    """The values of one dimension over the attempts that count in the case mean."""
    values = []
    for a in scope.counted(entry, case):
        dims = (a.grade or {}).get("dimensions", {})
        if scope.total(a) is not None and name in dims:
            values.append(float(dims[name]))
    return values


def _case_score(scope: _Scope, entry: str, case: str) -> CaseScore:
    boot = scope.release.aggregation.bootstrap
    mine = scope.counted(entry, case)
    totals = [scope.total(a) for a in mine]
    valid = [t for t in totals if t is not None]
    rng = uncertainty.rng_for(boot.seed, f"{entry}/case:{case}")
    return CaseScore(
        case=case,
        attempts=dict(sorted(Counter(scope.outcome(a) for a in mine).items())),
        valid=len(valid),
        mean=uncertainty.mean(valid) if valid else None,
        se=uncertainty.standard_error(valid),
        ci=uncertainty.case_interval(valid, rng, boot.resamples) if valid else None,
        per_attempt=totals,
    )


def _record(entry: Entry, conditions: Conditions) -> EntryRecord:
    return EntryRecord(
        model=entry.model,
        agent={"name": entry.agent.name, "version": entry.agent.version},
        reasoning_effort=entry.reasoning_effort,
        tool_profile=entry.tool_profile,
        skill_digest=conditions.skills.get(entry.id),
        runtime=dict(entry.runtime),
        evidence_condition=entry.evidence_condition,
        sandbox=entry.sandbox,
        budget=entry.budget,
        digest=conditions.entries[entry.id],
    )


def _slot(scope: _Scope, attempt: Graded) -> Slot:
    rec = attempt.record
    return Slot(
        attempt.id,
        rec.entry,
        rec.case,
        rec.outcome,
        rec.try_index + 1,
        attempt.id in scope.withdrawn,
    )


def _summary(scope: _Scope, attempt: Graded) -> AttemptSummary:
    rec = attempt.record
    out = attempt.id in scope.withdrawn
    return AttemptSummary(
        id=attempt.id,
        entry=rec.entry,
        case=rec.case,
        index=rec.index,
        outcome=scope.outcome(attempt),
        reason=rec.reason,
        formal=rec.formal,
        total=scope.total(attempt),
        dimensions={} if out else _published(attempt.grade or {}),
        trace=rec.model_use.trace() if rec.model_use is not None else rec.trace,
        record=attempt.record_digest,
        tries=rec.try_index + 1,
        retry_of=rec.retry_of,
        egress=rec.egress,
        checks=[] if out or attempt.grade is None else public_checks(attempt.grade),
        model_use=rec.model_use,
        agent_trace=agent_report(rec),
    )


def agent_report(rec: AttemptRecord) -> Trace | None:
    """A gateway attempt's own trace report, shown beside what the gateway metered (the
    run page marks the counts that differ). None: no gateway, or the agent reported nothing
    (a scripted or silent agent)."""
    if rec.model_use is None or not rec.trace.reported():
        return None
    return rec.trace


def _published(grade: dict[str, Any]) -> dict[str, DimensionSummary]:
    """Each dimension's value and its allow-listed terms. The grade table's arithmetic
    (weights and products) and every other term stay in the store (DESIGN §5.3)."""
    terms = grade.get("terms", {})
    return {
        name: DimensionSummary(value=value, terms=public_terms(name, terms.get(name, {})))
        for name, value in sorted(grade.get("dimensions", {}).items())
    }
