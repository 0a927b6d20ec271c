"""Public labels of sealed checks: refused when they give the check away (issue 14)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from recon.grade import functional, workflow
from recon.model import Grading, load_yaml
from recon.model.grading import Assertion, Workflow
from recon.model.labels import fallback, leaks
from recon.release.checks import public_checks
from tests.conftest import REPO, copy_project, recon


def assertion(**over: Any) -> Assertion:
    fields: dict[str, Any] = {
        "id": "count",
        "locator": {"text": "0 items left"},
        "expect": "visible",
    }
    return Assertion.model_validate(fields | over)


@pytest.mark.parametrize(
    ("over", "leaked"),
    [
        ({"label": "the counter reads 0 Items Left"}, "0 items left"),  # case-insensitive
        ({"locator": {"css": "#total-7f3a"}, "label": "#TOTAL-7f3a is shown"}, "#total-7f3a"),
        ({"locator": {"role": "button", "name": "Clear completed"}, "label": "clear  completed"},
         "Clear completed"),  # whitespace runs folded
        ({"expect": "text", "value": "What needs to be done?",
          "label": "it asks what needs to be done?"}, "What needs to be done?"),
        ({"expect": "count", "value": 3, "label": "3 filters"}, "3"),
        ({"locator": {"test_id": "cart-total"}, "label": "the cart-total cell"}, "cart-total"),
    ],
)  # fmt: skip
def test_a_label_holding_its_selector_or_expected_value_is_refused(
    over: dict[str, Any], leaked: str
) -> None:
    with pytest.raises(ValidationError) as refused:
        assertion(**over)
    assert f"contains its selector or expected value {leaked!r}" in str(refused.value)


def test_labels_that_say_what_the_check_means_pass() -> None:
    assert assertion(label="the counter says nothing is left").label
    assert assertion(expect="count", value=3, locator={"role": "link"}, label="300 ms").label
    assert assertion(expect="count", value=3, locator={"role": "link"}, label="the filters")
    assert assertion(locator={"role": "heading"}, expect="hidden", label="no heading is shown")
    assert leaks("the input starts empty", ["", None, "x"]) == []
    with pytest.raises(ValidationError, match="at most 120"):
        assertion(label="x" * 121)
    with pytest.raises(ValidationError, match="a label is one line of text"):
        assertion(label="two\nlines")


def test_workflow_and_checkpoint_labels_cannot_name_steps_or_assertions() -> None:
    steps: list[dict[str, Any]] = [
        {"fill": {"label": "New todo"}, "value": "Buy milk"},
        {"id": "added", "assertions": [{"id": "one", "locator": {"text": "1 item left"},
                                        "expect": "visible"}]},
    ]  # fmt: skip
    with pytest.raises(ValidationError, match="a selector or value of its steps 'Buy milk'"):
        Workflow.model_validate({"id": "w", "steps": steps, "label": "add buy milk"})
    with pytest.raises(ValidationError, match="of its assertions '1 item left'"):
        Workflow.model_validate(
            {"id": "w", "steps": [steps[0], steps[1] | {"label": "shows 1 item left"}]}
        )
    flow = Workflow.model_validate(
        {"id": "w", "steps": [steps[0], steps[1] | {"label": "the todo is added"}],
         "label": "add a todo"}
    )  # fmt: skip
    assert flow.label == "add a todo"


def test_grade_rows_carry_labels_or_a_fallback_and_the_release_publishes_only_those() -> None:
    checks = [assertion(label="the counter shows"), assertion(id="other")]
    rows = [{"id": "count", "passed": True, "observed": "0 items left"}]
    func = functional.score(checks, rows)
    assert [r["label"] for r in func.rows] == ["the counter shows", fallback("functional", 1)]
    flow = Workflow.model_validate(
        {"id": "w", "steps": [{"id": "cp", "preserve": "reload", "assertions": [
            {"id": "a", "locator": {"text": "1 item left"}, "expect": "visible"}]}]}
    )  # fmt: skip
    flows = workflow.score([flow], {"w/cp": [{"id": "a", "passed": True}]})
    table = {
        "details": {"functional": func.rows, "workflow": flows.rows},
        "checkpoint_shots": {"w/cp": "ab" * 32},
    }
    published = public_checks(table)
    assert [(c.dimension, c.label, c.passed) for c in published] == [
        ("functional", "the counter shows", True),
        ("functional", "functional check 2 (unlabelled)", False),
        ("workflow", "checkpoint check 1 (unlabelled)", True),
    ]
    assert published[2].group == "workflow check 1 (unlabelled)"
    assert published[2].kept is False and published[2].screenshot == "ab" * 32
    dumped = str([c.model_dump() for c in published])
    assert "0 items left" not in dumped and "'count'" not in dumped and "weight" not in dumped


def test_every_check_of_the_demo_cases_has_a_label() -> None:
    for path in sorted((REPO / "cases").glob("*/sealed/grading.yaml")):
        grading = load_yaml(Grading, path)
        assert all(a.label for a in grading.assertions), path
        for wf in grading.workflows:
            assert wf.label and all(getattr(s, "label", True) for s in wf.steps), path


def test_recon_validate_refuses_a_leaking_label_in_one_line(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    grading = project / "cases/todomvc/sealed/grading.yaml"
    text = grading.read_text()
    grading.write_text(text.replace("label: the filters are shown", "label: 3 filters"))
    done = recon(project, "validate", "--no-render")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith("recon: cases/todomvc/sealed/grading.yaml: assertions[7]: ")
    assert "label '3 filters' contains its selector or expected value '3'" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
