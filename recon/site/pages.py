"""The release-level pages: leaderboard (``index.html``), entry pages, reliability.

Each function turns allow-listed data (:func:`recon.site.allow.public`) into the context
of one template; no model reaches a template.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, get_args

from recon.model.grading import DIMENSIONS
from recon.model.records import Outcome
from recon.model.result import EntryResult, ReleaseResult
from recon.site.allow import public

OUTCOMES: tuple[str, ...] = get_args(Outcome)
Context = dict[str, Any]


def header(result: ReleaseResult) -> Context:
    """What every page's header and footer show of the release."""
    data = public(result)
    keep = ("release", "title", "protocol", "formal", "formal_note", "aggregation")
    return {k: data[k] for k in keep} | {"active": len(result.active_cases)}


def ordered(entries: list[EntryResult]) -> list[EntryResult]:
    """Ranked entries by rank, then unranked ones by score (highest first), then name."""

    def key(e: EntryResult) -> tuple[bool, int, float, str]:
        score = e.score if e.score is not None and e.score == e.score else -1.0
        return (e.rank is None, e.rank or 0, -score, e.entry)

    return sorted(entries, key=key)


def band(entry: Mapping[str, Any]) -> str | None:
    found = entry["band"]
    if found is None:
        return None
    first, last = found
    return str(first) if first == last else f"{first}–{last}"


def _row(result: ReleaseResult, entry: EntryResult) -> Context:
    data = public(entry)
    rel = result.reliability.entries.get(entry.entry)
    record = data["record"] or {}
    return data | {
        "band_text": band(data),
        "condition": record.get("evidence_condition", "unknown"),
        "agent_name": (record.get("agent") or {}).get("name", entry.agent),
        "reliability": public(rel) if rel is not None else None,
        "dims": [(name, (data["dimensions"].get(name) or {}).get("mean")) for name in DIMENSIONS],
    }


def leaderboard(result: ReleaseResult) -> Context:
    rows = [_row(result, e) for e in ordered(result.entries)]
    return {
        "ranked": [r for r in rows if r["ranked"]],
        "unranked": [r for r in rows if not r["ranked"]],
        "conditions": sorted({r["condition"] for r in rows}),
        "agents": sorted({r["agent_name"] for r in rows}),
        "uncertainty": public(result.uncertainty),
        "cases": list(result.active_cases),
        "dimensions": list(DIMENSIONS),
    }


def _trace_totals(attempts: list[Context]) -> dict[str, int | None]:
    totals: dict[str, int | None] = {}
    for name in ("turns", "tool_calls", "tokens"):
        seen = [a["trace"][name] for a in attempts if a["trace"][name] is not None]
        totals[name] = sum(seen) if seen else None
    return totals


def entry_page(result: ReleaseResult, entry: EntryResult) -> Context:
    attempts = sorted(
        (public(a) for a in result.attempts if a.entry == entry.entry),
        key=lambda a: (a["case"], a["index"], a["id"]),
    )
    return {
        "entry": _row(result, entry),
        "attempts": attempts,
        "trace": _trace_totals(attempts),
        "egress": {
            k: sum(a["egress"][k] for a in attempts) for k in ("allowed", "refused", "failed")
        },
        "dimensions": list(DIMENSIONS),
        "active": list(result.active_cases),
    }


def _reliability_row(scope: str, link: str | None, rel: Any) -> Context:
    data = public(rel)
    return data | {"scope": scope, "link": link}


def reliability_page(result: ReleaseResult) -> Context:
    rel = result.reliability
    return {
        "outcomes": OUTCOMES,
        "overall": _reliability_row("release", None, rel.overall),
        "entries": [
            _reliability_row(e, f"entries/{e}.html", r) for e, r in sorted(rel.entries.items())
        ],
        "cases": [_reliability_row(c, f"cases/{c}.html", r) for c, r in sorted(rel.cases.items())],
        "withdrawals": [public(w) for w in result.withdrawals],
        "retried": [public(a) for a in sorted(result.attempts, key=lambda a: a.id) if a.tries > 1],
    }
