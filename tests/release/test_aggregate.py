"""DESIGN §7: repeat mean per case, equal case weight, coverage, exclusions, ties."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from recon.model import (
    PUBLIC_TERMS,
    AttemptSummary,
    DimensionSummary,
    Entry,
    ReleaseDef,
    ReleaseResult,
)
from recon.model.grading import DIMENSIONS
from recon.release.aggregate import Graded, aggregate
from tests.release.factories import attempt, conditions
from tests.release.factories import entry as _entry
from tests.release.factories import release as _release

DIGEST = "0" * 64


def _run(release: ReleaseDef, entries: dict[str, Entry], attempts: list[Graded]) -> ReleaseResult:
    return aggregate(release, entries, attempts, conditions(list(entries))).result


def _attempt(entry: str, case: str, index: int, outcome: str, total: float | None) -> Graded:
    return attempt(entry, case, index, outcome, total)


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
    result = _run(_release(["a", "b", "c"], ["x", "y"]), entries, attempts)
    by = {e.entry: e for e in result.entries}
    assert by["a"].score == 0.5 and by["b"].score == 0.5  # (0.75 + 0.25) / 2, not (1+.5+.25)/3
    assert by["a"].rank == 1 and by["b"].rank == 1  # a tie shares the rank
    assert by["c"].ranked is False and by["c"].rank is None and by["c"].score is None
    assert by["c"].covered == 1 and by["c"].cases[0].mean == 1.0  # partial: visible, unranked
    assert [e.entry for e in result.entries] == ["a", "b", "c"]
    assert result.reliability.overall.by_outcome["harness_failure"] == 1
    assert result.reliability.overall.harness_failure_rate == 0.1
    assert len(result.attempts) == len(attempts)  # excluded attempts stay listed


def test_published_dimensions_carry_values_and_public_terms_never_weights_or_products() -> None:
    result = _run(_release(["a"], ["x"]), {"a": _entry("a")}, [_attempt("a", "x", 0, "valid", 0.5)])
    summary = result.attempts[0]
    assert summary.total == 0.5
    assert summary.dimensions["functional"] == DimensionSummary(
        value=0.5, terms={"assertions": 4.0}
    )
    assert summary.dimensions["regional_visual"] == DimensionSummary(
        value=0.5, terms={"regions": 2.0}
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
    result = _run(_release(["a"], ["x"]), {"a": _entry("a")}, [])
    assert result.formal is False and "Non-formal" in result.formal_note
