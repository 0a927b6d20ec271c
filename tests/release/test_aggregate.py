"""DESIGN §7: repeat mean per case, equal case weight, coverage, exclusions, ties."""

from __future__ import annotations

from recon.model import AttemptRecord, Entry, ReleaseDef
from recon.release.aggregate import Graded, aggregate

DIGEST = "0" * 64


def _entry(ident: str) -> Entry:
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


def _release(entries: list[str], cases: list[str]) -> ReleaseDef:
    return ReleaseDef.model_validate(
        {
            "id": "r",
            "title": "t",
            "cases": cases,
            "entries": entries,
            "protocol": {
                "name": "p",
                "repeats": 2,
                "time_limit_s": 1,
                "backend": "native",
                "formal": False,
            },
        }
    )


def _attempt(entry: str, case: str, index: int, outcome: str, total: float | None) -> Graded:
    record = AttemptRecord(
        entry=entry,
        case=case,
        index=index,
        protocol="p",
        backend="native",
        formal=False,
        outcome=outcome,
        reason="r",
        image=DIGEST,
    )
    grade = (
        None
        if total is None
        else {
            "total": total,
            "dimensions": {},
            "arithmetic": [
                {"term": "functional", "weight": 0.3, "value": total, "product": 0.3 * total}
            ],
        }
    )
    return Graded(f"{entry}.{case}.{index}", record, DIGEST, grade)


def test_case_mean_then_equal_case_weight_and_coverage() -> None:
    entries = {e: _entry(e) for e in ("a", "b", "c")}
    attempts = [
        _attempt("a", "x", 0, "valid", 1.0),
        _attempt("a", "x", 1, "valid", 0.5),  # x mean 0.75
        _attempt("a", "y", 0, "valid", 0.25),
        _attempt("a", "y", 1, "timeout", None),  # y mean 0.25
        _attempt("b", "x", 0, "valid", 0.5),
        _attempt("b", "x", 1, "harness_failure", None),
        _attempt("b", "y", 0, "valid", 0.5),
        _attempt("b", "y", 1, "ungradeable", None),
        _attempt("c", "x", 0, "valid", 1.0),
        _attempt("c", "y", 0, "missing", None),
    ]
    result = aggregate(_release(["a", "b", "c"], ["x", "y"]), entries, attempts)
    by = {e.entry: e for e in result.entries}
    assert by["a"].score == 0.5 and by["b"].score == 0.5  # (0.75 + 0.25) / 2, not (1+.5+.25)/3
    assert by["a"].rank == 1 and by["b"].rank == 1  # a tie shares the rank
    assert by["c"].ranked is False and by["c"].rank is None and by["c"].score is None
    assert by["c"].covered == 1 and by["c"].cases[0].mean == 1.0  # partial: visible, unranked
    assert [e.entry for e in result.entries] == ["a", "b", "c"]
    assert result.reliability.by_outcome["harness_failure"] == 1
    assert result.reliability.harness_failure_rate == 0.1
    assert len(result.attempts) == len(attempts)  # excluded attempts stay listed


def test_published_arithmetic_carries_no_sealed_weight() -> None:
    result = aggregate(
        _release(["a"], ["x"]), {"a": _entry("a")}, [_attempt("a", "x", 0, "valid", 0.5)]
    )
    row = result.attempts[0].arithmetic[0]
    assert "weight" not in row and row["product"] == 0.15


def test_non_formal_release_says_so() -> None:
    result = aggregate(_release(["a"], ["x"]), {"a": _entry("a")}, [])
    assert result.formal is False and "Non-formal" in result.formal_note
