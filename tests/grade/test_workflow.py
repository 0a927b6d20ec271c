"""Unit tests for recon.grade.workflow: checkpoints reached in order, and preserved."""

from __future__ import annotations

from recon.grade.workflow import WorkflowScore, key, score
from recon.model.grading import Assertion, Checkpoint, Locator, Step, Workflow


def check(ident: str) -> Assertion:
    return Assertion(id=ident, locator=Locator(test_id=ident), expect="visible")


CART = Workflow(
    id="cart",
    steps=[
        Step(click=Locator(role="button", name="Add")),
        Checkpoint(id="added", assertions=[check("badge"), check("toast")]),
        Step(click=Locator(role="link", name="Cart")),
        Checkpoint(id="listed", assertions=[check("line")], preserve="reload"),
        Step(click=Locator(role="button", name="Pay")),
        Checkpoint(id="paid", assertions=[check("thanks")], compare_oracle=True),
    ],
    weight=3.0,
)
THEME = Workflow(
    id="theme",
    steps=[
        Step(click=Locator(test_id="dark")),
        Checkpoint(
            id="dark", assertions=[check("dark-body")], preserve="navigate", navigate_to="/about"
        ),
    ],
)


def ok(*ids: str, passed: bool = True) -> list[dict]:
    return [{"id": i, "passed": passed, "observed": ""} for i in ids]


ALL = {
    key("cart", "added"): ok("badge", "toast"),
    key("cart", "listed"): ok("line"),
    key("cart", "listed", preserved=True): ok("line"),
    key("cart", "paid"): ok("thanks"),
    key("theme", "dark"): ok("dark-body"),
    key("theme", "dark", preserved=True): ok("dark-body"),
}
ORACLE = {key("cart", "paid"): 1.0}


def test_everything_reached_and_preserved_scores_exactly_one() -> None:
    result = score([CART, THEME], ALL, ORACLE)
    assert isinstance(result, WorkflowScore)
    assert result.score == 1.0
    assert [r["units"] for r in result.rows] == [4, 2]


def test_no_results_score_zero() -> None:
    assert score([CART, THEME], {}, {}).score == 0.0


def test_a_failed_checkpoint_stops_credit_for_later_ones() -> None:
    results = ALL | {key("cart", "added"): ok("badge") + ok("toast", passed=False)}
    cart = score([CART], results, ORACLE).rows[0]
    assert [c["reached"] for c in cart["checkpoints"]] == [False, False, False]
    assert cart["score"] == 0.0
    later = ALL | {key("cart", "paid"): ok("thanks", passed=False)}
    assert score([CART], later, ORACLE).rows[0]["score"] == 3 / 4


def test_a_lost_state_after_reload_costs_its_own_unit() -> None:
    results = ALL | {key("cart", "listed", preserved=True): ok("line", passed=False)}
    cart = score([CART], results, ORACLE).rows[0]
    assert cart["checkpoints"][1]["preserved"] == 0.0 and cart["checkpoints"][2]["reached"]
    assert cart["score"] == 3 / 4


def test_oracle_comparison_scales_the_checkpoint_credit() -> None:
    partial = score([CART], ALL, {key("cart", "paid"): 0.6}).rows[0]
    assert partial["checkpoints"][2]["oracle_visual"] == 0.6
    assert partial["score"] == (1 + 1 + 1 + 0.6) / 4
    assert score([CART], ALL, {}).rows[0]["score"] == 3 / 4  # no oracle score: no credit


def test_workflows_are_weighted() -> None:
    results = {k: v for k, v in ALL.items() if not k.startswith("theme/")}
    assert score([CART, THEME], results, ORACLE).score == 3.0 / 4.0


def test_monotonic_and_deterministic() -> None:
    values = []
    for failing in ("thanks", "line", "badge"):
        results = {k: [r | {"passed": r["id"] != failing} for r in v] for k, v in ALL.items()}
        values.append(score([CART, THEME], results, ORACLE).score)
    assert values[0] > values[1] > values[2]
    assert (
        values[1].hex()
        == score(
            [CART, THEME],
            {k: [r | {"passed": r["id"] != "line"} for r in v] for k, v in ALL.items()},
            ORACLE,
        ).score.hex()
    )
    assert score([], {}).score == 1.0
