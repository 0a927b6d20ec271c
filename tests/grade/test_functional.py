"""Unit tests for recon.grade.functional and the compose wrapper that keeps its old name."""

from __future__ import annotations

from recon.grade.functional import Functional, pass_rate, passed_by_id, score
from recon.model.grading import Assertion, Locator

ASSERTIONS = [
    Assertion(id="greeting", locator=Locator(text="Hello"), expect="visible", weight=2.0),
    Assertion(id="one-p", locator=Locator(css="body > p"), expect="count", value=1),
    Assertion(id="title", locator=Locator(role="heading"), expect="text", value="Hi", weight=1.0),
]


def rows(**passed: bool) -> list[dict]:
    return [{"id": k.replace("_", "-"), "passed": v, "observed": "x"} for k, v in passed.items()]


def test_all_passing_scores_exactly_one() -> None:
    result = score(ASSERTIONS, rows(greeting=True, one_p=True, title=True))
    assert isinstance(result, Functional)
    assert result.score == 1.0 and result.terms["weight_passed"] == 4.0


def test_nothing_passing_scores_zero_and_a_missing_result_fails() -> None:
    assert score(ASSERTIONS, []).score == 0.0
    result = score(ASSERTIONS, rows(greeting=True, one_p=True))
    assert result.score == 3.0 / 4.0
    assert result.rows[2] == {
        "id": "title",
        "label": "functional check 3 (unlabelled)",
        "weight": 1.0,
        "passed": False,
        "observed": "no result",
    }


def test_weights_matter_and_failing_more_costs_more() -> None:
    heavy_fails = score(ASSERTIONS, rows(greeting=False, one_p=True, title=True)).score
    light_fails = score(ASSERTIONS, rows(greeting=True, one_p=False, title=True)).score
    assert heavy_fails == 0.5 < light_fails == 0.75


def test_repeated_rows_pass_only_if_all_pass() -> None:
    assert passed_by_id([{"id": "a", "passed": True}, {"id": "a", "passed": False}]) == {"a": False}


def test_no_assertions_score_one() -> None:
    assert score([], []).score == 1.0
    assert pass_rate({}, {}) == 1.0


def test_pass_rate_weighs_each_assertion() -> None:
    weights = {"a": 1.0, "b": 3.0}
    assert pass_rate({"b": True}, weights) == 0.75


def test_deterministic() -> None:
    results = rows(greeting=True, one_p=False, title=True)
    assert score(ASSERTIONS, results).score.hex() == score(ASSERTIONS, list(results)).score.hex()
