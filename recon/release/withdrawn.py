"""Which attempts are withdrawn, and what each withdrawal changes (DESIGN §7). Pure.

An attempt is withdrawn manually (an active entry of ``releases/<id>.withdrawals.json``
naming its attempt and the digest of its record) or automatically, when the conditions
its record names (protocol, protocol digest, image digest, entry digest, evidence
condition) differ from the release's. A withdrawn attempt counts in no denominator;
each withdrawal is published with, per denominator, its count without and with it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from recon.model import Active, AttemptRecord, Outcome, Sidecar, Withdrawn
from recon.store import digest_json

SHORT = 12


@dataclass(frozen=True)
class Attempt:
    """What withdrawals and denominators need of one attempt."""

    id: str
    entry: str
    case: str
    valid: bool  # valid and graded: it enters its case mean unless withdrawn
    record: str  # the digest of its record
    outcome: Outcome  # its record's outcome


def _shown(value: str) -> str:
    hexdigits = set("0123456789abcdef")
    return value[:SHORT] if len(value) == 64 and set(value) <= hexdigits else value


def mismatches(record: AttemptRecord, expected: Mapping[str, str | None]) -> list[str]:
    """Each recorded condition that differs from the release's: ``image digest 1a2b… ≠
    release's 3c4d…``. A condition the record does not hold (older records) or the release
    does not state is not compared."""
    found = []
    for name, recorded in record.conditions().items():
        wanted = expected.get(name)
        if recorded is not None and wanted is not None and recorded != wanted:
            found.append(f"{name} {_shown(recorded)} ≠ release's {_shown(wanted)}")
    return found


def automatic(release: str, attempt: str, record: str, mismatch: list[str]) -> Sidecar:
    """The sidecar of an automatic withdrawal: deterministic (no clock), so the aggregate
    cell that writes it stays reproducible."""
    return Sidecar(
        action="withdraw",
        release=release,
        attempt=attempt,
        record=record,
        reason="run conditions did not match the release: " + "; ".join(mismatch),
        by="recon",
        at=None,
        automatic=True,
        mismatch=mismatch,
    )


def denominators(
    attempts: Sequence[Attempt], withdrawn: Collection[str], entry: str, case: str, active: int
) -> dict[str, int]:
    """The counts one attempt of ``entry`` on ``case`` can enter: the valid repeats of its
    case mean, the cases its entry covers (of ``active``), and the attempts its entry, its
    case and the release count in their reliability statistics."""
    counted = [a for a in attempts if a.id not in withdrawn]
    covered = {a.case for a in counted if a.entry == entry and a.valid}
    return {
        "case_valid": sum(1 for a in counted if (a.entry, a.case) == (entry, case) and a.valid),
        "entry_covered": min(len(covered), active),
        "entry_attempts": sum(1 for a in counted if a.entry == entry),
        "case_attempts": sum(1 for a in counted if a.case == case),
        "release_attempts": len(counted),
    }


def effect(
    attempts: Sequence[Attempt],
    withdrawn: Collection[str],
    still_withdrawn: bool,
    attempt: Attempt,
    active: int,
) -> dict[str, tuple[int, int]]:
    """Per denominator: (count without this withdrawal, count with it). ``still_withdrawn``:
    another withdrawal covers the same attempt, so undoing this one changes nothing."""
    without = set(withdrawn) if still_withdrawn else set(withdrawn) - {attempt.id}
    before = denominators(attempts, without, attempt.entry, attempt.case, active)
    after = denominators(attempts, withdrawn, attempt.entry, attempt.case, active)
    return {name: (before[name], after[name]) for name in before}


def applies(w: Active, by_id: Mapping[str, Attempt]) -> bool:
    """A manual withdrawal applies to its attempt while the attempt keeps the record it
    names (a re-run gives a new record, which the withdrawal does not cover)."""
    found = by_id.get(w.attempt)
    return found is not None and found.record == w.record


def applied(
    attempts: Sequence[Attempt], manual: Sequence[Active], auto: Mapping[str, Sidecar]
) -> set[str]:
    """The ids of every withdrawn attempt."""
    by_id = {a.id: a for a in attempts}
    return set(auto) | {w.attempt for w in manual if applies(w, by_id)}


def _listed(w: Active | Sidecar, found: Attempt | None, sidecar: str, live: bool) -> Withdrawn:
    return Withdrawn(
        attempt=w.attempt,
        entry=found.entry if found else "",
        case=found.case if found else "",
        automatic=isinstance(w, Sidecar),
        applies=live,
        reason=w.reason,
        by=w.by,
        at=w.at,
        record=w.record,
        sidecar=sidecar,
        recorded_outcome=found.outcome if found else None,
    )


def listing(
    attempts: Sequence[Attempt],
    manual: Sequence[Active],
    auto: Mapping[str, Sidecar],
    active_cases: int,
) -> list[Withdrawn]:
    """Every withdrawal, manual and automatic, with its effect on each denominator (none
    for a manual one that no longer applies)."""
    by_id = {a.id: a for a in attempts}
    out = applied(attempts, manual, auto)
    listed = [_listed(w, by_id.get(w.attempt), w.sidecar, applies(w, by_id)) for w in manual]
    listed += [
        _listed(s, by_id[a], digest_json(s.model_dump(mode="json")), True)
        for a, s in sorted(auto.items())
    ]
    manual_live = {w.attempt for w in manual if applies(w, by_id)}
    final = []
    for item in sorted(listed, key=lambda w: (w.attempt, w.automatic)):
        if item.applies:
            also = item.attempt in (manual_live if item.automatic else auto)
            moved = effect(attempts, out, also, by_id[item.attempt], active_cases)
            item = item.model_copy(update={"effect": moved})
        final.append(item)
    return final
