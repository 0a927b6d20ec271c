"""Entries, release definitions, attempt records and grade tables for aggregation tests."""

from __future__ import annotations

from typing import Any

import blake3

from recon.model import AttemptRecord, Entry, ReleaseDef
from recon.release.aggregate import Conditions, Graded


def d(label: str) -> str:
    return blake3.blake3(label.encode()).hexdigest()


PROTOCOL = d("protocol")
IMAGE = d("image")


def conditions(entries: list[str]) -> Conditions:
    return Conditions(
        protocol_digest=PROTOCOL,
        images={"native": IMAGE},
        entries={e: d(f"entry-{e}") for e in entries},
        skills={e: None for e in entries},
    )


def entry(ident: str) -> Entry:
    return Entry.model_validate(
        {
            "id": ident,
            "model": {"provider": "p", "name": ident, "version": "1"},
            "agent": {"name": "a", "version": "1", "command": ["x"]},
            "reasoning_effort": "none",
            "tool_profile": "none",
            "sandbox": {"backend": "native"},
            "budget": {
                "cpus": 1,
                "memory_mb": 64,
                "pids": 16,
                "wall_s": 1,
                "disk_mb": 1,
                "output_mb": 1,
            },
        }
    )


def release(
    entries: list[str], cases: list[str], repeats: int = 2, seed: int = 0, resamples: int = 2000
) -> ReleaseDef:
    return ReleaseDef.model_validate(
        {
            "id": "r",
            "title": "t",
            "cases": cases,
            "entries": entries,
            "protocol": {
                "name": "p",
                "repeats": repeats,
                "time_limit_s": 1,
                "backend": "native",
                "formal": False,
            },
            "aggregation": {"bootstrap": {"seed": seed, "resamples": resamples}},
        }
    )


def grade(total: float) -> dict[str, Any]:
    """A grade table with two dimensions, their terms, and the sealed arithmetic."""
    return {
        "total": total,
        "dimensions": {"functional": total, "regional_visual": 1.0 - total},
        "terms": {
            "functional": {"assertions": 4.0, "weight_sum": 3.5, "weight_passed": 1.75},
            "regional_visual": {"regions": 2.0, "weight_sum": 3.0, "weighted_sum": 3.0},
        },
        "arithmetic": [
            {"term": "functional", "weight": 0.3, "value": total, "product": 0.3 * total},
            {"term": "regional_visual", "weight": 0.7, "value": 1.0, "product": 0.7},
        ],
    }


def attempt(
    entry: str, case: str, index: int, outcome: str, total: float | None, **record: Any
) -> Graded:
    fields: dict[str, Any] = {
        "entry": entry,
        "case": case,
        "index": index,
        "protocol": "p",
        "backend": "native",
        "formal": False,
        "outcome": outcome,
        "reason": outcome,
        "image": IMAGE,
        "protocol_digest": PROTOCOL,
        "entry_digest": d(f"entry-{entry}"),
        "evidence_condition": "full",
    }
    rec = AttemptRecord(**(fields | record))
    ident = f"p.{entry}.{case}.{index}"
    return Graded(ident, rec, d(f"record-{ident}"), None if total is None else grade(total))
