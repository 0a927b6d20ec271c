"""DESIGN §7: repeat mean per case, equal case weight, coverage, exclusions, ties."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from recon.model import (
    PUBLIC_TERMS,
    AttemptRecord,
    AttemptSummary,
    DimensionSummary,
    Entry,
    ReleaseDef,
)
from recon.model.grading import DIMENSIONS
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
            "dimensions": {"functional": total, "regional_visual": 1.0},
            "terms": {
                "functional": {"assertions": 4.0, "weight_sum": 3.5, "weight_passed": 1.75},
                "regional_visual": {"regions": 2.0, "weight_sum": 3.0, "weighted_sum": 3.0},
            },
            "arithmetic": [
                {"term": "functional", "weight": 0.3, "value": total, "product": 0.3 * total},
                {"term": "regional_visual", "weight": 0.7, "value": 1.0, "product": 0.7},
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


def test_published_dimensions_carry_values_and_public_terms_never_weights_or_products() -> None:
    result = aggregate(
        _release(["a"], ["x"]), {"a": _entry("a")}, [_attempt("a", "x", 0, "valid", 0.5)]
    )
    summary = result.attempts[0]
    assert summary.total == 0.5
    assert summary.dimensions["functional"] == DimensionSummary(
        value=0.5, terms={"assertions": 4.0}
    )
    assert summary.dimensions["regional_visual"] == DimensionSummary(
        value=1.0, terms={"regions": 2.0}
    )
    published = result.model_dump_json()
    for sealed in ("weight", "product", "arithmetic", "0.15", "0.7", "3.5", "1.75"):
        assert sealed not in published, sealed


def test_a_summary_cannot_carry_a_sealed_term() -> None:
    base = {"value": 0.5, "terms": {"assertions": 4.0}}
    summary = _summary({"functional": base})
    for name, term in (("functional", "weight_sum"), ("policy", "penalty_sum")):
        dims = {name: {"value": 0.5, "terms": {term: 1.0}}}
        with pytest.raises(ValidationError, match="not public terms"):
            _summary(dims)
    with pytest.raises(ValidationError):
        _summary({"functional": {**base, "product": 0.15}})  # a row shape of the arithmetic
    with pytest.raises(ValidationError):
        _summary({"weights": base})  # not a dimension
    with pytest.raises(ValidationError):
        AttemptSummary.model_validate({**summary.model_dump(), "arithmetic": []})


def _summary(dimensions: dict[str, Any]) -> AttemptSummary:
    return AttemptSummary.model_validate(
        {
            "id": "a.x.0",
            "entry": "a",
            "case": "x",
            "index": 0,
            "outcome": "valid",
            "reason": "",
            "formal": False,
            "total": 0.5,
            "dimensions": dimensions,
            "trace": {},
            "record": DIGEST,
        }
    )


def test_public_terms_cover_every_dimension_and_name_no_weight() -> None:
    assert set(PUBLIC_TERMS) == set(DIMENSIONS)
    for names in PUBLIC_TERMS.values():
        assert not any("weight" in n or "penalty" in n or "product" in n for n in names)


def test_non_formal_release_says_so() -> None:
    result = aggregate(_release(["a"], ["x"]), {"a": _entry("a")}, [])
    assert result.formal is False and "Non-formal" in result.formal_note
