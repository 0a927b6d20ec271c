"""The one interaction vocabulary (recon.model.interaction) in sealed workflows."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from recon.errors import ConfigError
from recon.model import Grading, load_yaml
from recon.model.grading import DIMENSIONS
from recon.model.interaction import Locator, Step, rewritten

REPO = Path(__file__).resolve().parents[2]
WEIGHTS = {**dict.fromkeys(DIMENSIONS, 0.0), "functional": 0.5, "workflow": 0.5}


def grading(steps: list[object], tmp_path: Path) -> Path:
    checkpoint = {"id": "cp", "assertions": [{"id": "a", "locator": {"css": "p"},
                                               "expect": "visible"}]}  # fmt: skip
    data = {
        "schema_version": 1,
        "workflows": [{"id": "wf", "steps": [*steps, checkpoint]}],
        "weights": WEIGHTS,
    }
    path = tmp_path / "grading.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_workflow_speaks_the_contracts_step_shape(tmp_path: Path) -> None:
    steps = [
        {"click": {"role": "tab", "name": "Pricing"}},
        {"fill": {"placeholder": "Search"}, "value": "shoes"},
        {"press": {}, "key": "Escape"},
        {"click": {"css": "#sealed-only-is-fine-here"}},
        {"scroll": {"y": 300}},
        {"goto": "/about.html"},
        {"reload": None},
    ]
    loaded = load_yaml(Grading, grading(steps, tmp_path))
    parsed = [s for s in loaded.workflows[0].steps if isinstance(s, Step)]
    assert [s.action for s in parsed] == [
        "click", "fill", "press", "click", "scroll", "goto", "reload"
    ]  # fmt: skip
    assert parsed[1].locator == Locator(placeholder="Search")
    assert parsed[2].locator is None and parsed[2].key == "Escape"
    assert parsed[3].locator == Locator(css="#sealed-only-is-fine-here")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ({"action": "click", "locator": {"role": "tab", "name": "Pricing"}},
         "{click: {role: tab, name: Pricing}}"),
        ({"action": "fill", "locator": {"label": "Email"}, "value": "a@b"},
         "{fill: {label: Email}, value: a@b}"),
        ({"action": "press", "value": "Escape"}, "{press: {}, key: Escape}"),
        ({"action": "goto", "value": "/contact.html"}, "{goto: /contact.html}"),
        ({"action": "reload"}, "{reload: {}}"),
        ({"action": "scroll", "value": "600"}, "{scroll: {y: 600}}"),
    ],
)  # fmt: skip
def test_the_old_shape_is_refused_with_its_rewrite(
    tmp_path: Path, old: dict[str, object], new: str
) -> None:
    assert rewritten(old) == new
    with pytest.raises(ConfigError) as err:
        load_yaml(Grading, grading([old], tmp_path))
    message = str(err.value)
    assert "workflows[0].steps[0]: a step is written as its action and its target" in message
    assert f"write this one as {new}" in message
    assert yaml.safe_load(new)  # the rewrite is YAML a curator can paste


def test_an_assertion_locator_gives_one_kind(tmp_path: Path) -> None:
    path = tmp_path / "grading.yaml"
    bad = {"id": "a", "locator": {"text": "x", "alt": "y"}, "expect": "visible"}
    path.write_text(yaml.safe_dump({"assertions": [bad], "weights": WEIGHTS}))
    with pytest.raises(
        ConfigError, match=r"assertions\[0\]\.locator: a locator is one of .*, not \{alt, text\}"
    ):
        load_yaml(Grading, path)


def test_arias_img_is_refused_with_chromiums_spelling(tmp_path: Path) -> None:
    """role: img could never match (chromium computes ``image``): refused at load, in an
    assertion and in a workflow step alike, never left to "no matching element"."""
    path = tmp_path / "grading.yaml"
    bad = {"id": "a", "locator": {"role": "img"}, "expect": "visible"}
    path.write_text(yaml.safe_dump({"assertions": [bad], "weights": WEIGHTS}))
    fix = r"'img' is ARIA's name, which chromium computes as 'image'; write role: image"
    with pytest.raises(ConfigError, match=rf"assertions\[0\]\.locator\.role: {fix}"):
        load_yaml(Grading, path)
    with pytest.raises(ConfigError, match=rf"steps\[0\]\.click\.role: {fix}"):
        load_yaml(Grading, grading([{"click": {"role": "img", "name": "Logo"}}], tmp_path))
    assert Locator(role="image").role == "image"


def test_every_case_file_is_in_the_one_shape() -> None:
    for path in sorted(REPO.glob("cases/*/sealed/grading.yaml")):
        assert "action:" not in path.read_text().replace("call-to-action", ""), path
        load_yaml(Grading, path)
