"""public/contract.yaml: named viewports, public test ids, states reached by locator steps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from recon.errors import ConfigError
from recon.model import Contract, load_yaml
from recon.model.contract import VIEWPORTS, Locator, Offset, Step

REPO = Path(__file__).resolve().parents[2]
SOURCE = "cases/x/public/contract.yaml"

MENU = {
    "name": "menu-open",
    "route": "/",
    "steps": [
        {"click": {"role": "button", "name": "Menu"}},
        {"fill": {"label": "Search"}, "value": "shoes"},
        {"press": {"test_id": "search-box"}, "key": "Enter"},
        {"press": None, "key": "Escape"},
        {"hover": {"text": "Sale"}},
        {"scroll": {"y": 600}},
        {"scroll": {"text": "Footer"}},
        {"wait_for": {"role": "dialog"}},
    ],
}


def contract(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema_version": 1,
        "routes": ["/", "/about/"],
        "viewports": ["desktop", "mobile"],
        "test_ids": ["search-box"],
        "states": [MENU],
        "build": {"command": [], "output": "site"},
    }
    data.update(changes)
    return data


def error(data: dict[str, Any], tmp_path: Path) -> str:
    path = tmp_path / SOURCE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ConfigError) as err:
        load_yaml(Contract, path)
    message = str(err.value)
    assert "\n" not in message
    return message.removeprefix(f"{tmp_path}/")


def with_steps(*steps: dict[str, Any]) -> dict[str, Any]:
    return contract(states=[{"name": "s", "route": "/", "steps": list(steps)}])


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # so messages name the file as a person would type it


# the good shape ----------------------------------------------------------------------


def test_the_demo_contract_loads_with_registry_viewports() -> None:
    loaded = load_yaml(Contract, REPO / "cases/html5-boilerplate/public/contract.yaml")
    assert [v.name for v in loaded.viewports] == ["desktop", "mobile", "tablet"]
    assert (loaded.viewports[0].width, loaded.viewports[0].height) == (1440, 900)


def test_registry_sizes() -> None:
    sizes = {name: (v.width, v.height) for name, v in VIEWPORTS.items()}
    assert sizes == {"mobile": (390, 844), "tablet": (768, 1024), "desktop": (1440, 900)}


def test_every_action_and_locator_shape_loads() -> None:
    loaded = Contract.model_validate(contract())
    steps = loaded.states[0].steps
    assert [s.action for s in steps] == [
        "click", "fill", "press", "press", "hover", "scroll", "scroll", "wait_for"
    ]  # fmt: skip
    assert steps[0].target == Locator(role="button", name="Menu")
    assert steps[3].target is None and steps[3].key == "Escape"
    assert steps[5].target == Offset(y=600)
    assert isinstance(steps[6].target, Locator) and steps[6].target.text == "Footer"


def test_dump_is_canonical_and_round_trips() -> None:
    loaded = Contract.model_validate(contract())
    dumped = loaded.model_dump(mode="json")
    assert dumped["viewports"] == ["desktop", "mobile"]
    assert dumped["states"][0]["steps"][:4] == [
        {"click": {"role": "button", "name": "Menu"}},
        {"fill": {"label": "Search"}, "value": "shoes"},
        {"press": {"test_id": "search-box"}, "key": "Enter"},
        {"press": None, "key": "Escape"},
    ]
    assert Contract.model_validate(dumped) == loaded
    assert Step.model_validate({"press": {}, "key": "a"}).dump() == {"press": None, "key": "a"}


def test_json_schema_lists_the_viewport_names() -> None:
    schema = Contract.model_json_schema()
    assert schema["properties"]["viewports"]["items"]["enum"] == ["desktop", "mobile", "tablet"]


# bad input: one message naming the file and the field --------------------------------


def test_unknown_viewport_name(tmp_path: Path) -> None:
    message = error(contract(viewports=["desktop", "phablet"]), tmp_path)
    assert message.startswith(
        f"{SOURCE}: viewports[1]: unknown viewport 'phablet' (known: desktop, mobile, tablet)"
    )


def test_an_inline_viewport_size_is_refused(tmp_path: Path) -> None:
    message = error(contract(viewports=[{"name": "d", "width": 10, "height": 10}]), tmp_path)
    assert message.startswith(f"{SOURCE}: viewports[0]: a viewport is a name (known: desktop")


@pytest.mark.parametrize("empty", [{}, None])
def test_a_step_with_no_locator(tmp_path: Path, empty: dict[str, str] | None) -> None:
    data = with_steps({"click": {"text": "Menu"}}, {"click": empty})
    assert error(data, tmp_path).startswith(
        f"{SOURCE}: states[0].steps[1]: click needs a locator: "
        "one of {role[, name]}, {label}, {text}, {test_id}"
    )


@pytest.mark.parametrize("action", ["fill", "hover", "wait_for", "scroll"])
def test_every_locator_action_needs_one(tmp_path: Path, action: str) -> None:
    step: dict[str, Any] = {action: {}}
    if action == "fill":
        step["value"] = "x"
    assert f"states[0].steps[0]: {action} needs a locator" in error(with_steps(step), tmp_path)


def test_a_name_without_a_role_is_not_a_locator(tmp_path: Path) -> None:
    message = error(with_steps({"click": {"name": "Menu"}}), tmp_path)
    assert message.startswith(f"{SOURCE}: states[0].steps[0]: click: a locator is one of")
    assert "not {name}" in message


def test_two_locator_kinds_at_once(tmp_path: Path) -> None:
    message = error(with_steps({"hover": {"text": "a", "label": "b"}}), tmp_path)
    assert "states[0].steps[0]: hover: a locator is one of" in message
    assert "not {label, text}" in message


def test_a_step_needs_exactly_one_action(tmp_path: Path) -> None:
    message = error(with_steps({"click": {"text": "a"}, "hover": {"text": "b"}}), tmp_path)
    assert "states[0].steps[0]: a step has exactly one action" in message
    assert "(got click, hover)" in message


def test_fill_needs_a_value_and_press_a_key(tmp_path: Path) -> None:
    assert "fill needs 'value'" in error(with_steps({"fill": {"label": "Email"}}), tmp_path)
    assert "press needs 'key'" in error(with_steps({"press": None}), tmp_path)
    assert "click takes no 'value'" in error(
        with_steps({"click": {"text": "a"}, "value": "x"}), tmp_path
    )


def test_a_misspelt_action_is_an_unknown_key(tmp_path: Path) -> None:
    message = error(with_steps({"clik": {"text": "a"}}), tmp_path)
    assert message.startswith(f"{SOURCE}: states[0].steps[0].clik: unknown key")


def test_a_test_id_must_be_public(tmp_path: Path) -> None:
    message = error(with_steps({"click": {"test_id": "secret"}}), tmp_path)
    assert message.startswith(
        f"{SOURCE}: states[0].steps[0].click.test_id: test id 'secret' is not listed in test_ids"
    )


def test_a_state_route_must_be_a_contract_route(tmp_path: Path) -> None:
    data = contract(states=[{**MENU, "route": "/shop/"}])
    assert error(data, tmp_path).startswith(f"{SOURCE}: states[0].route: not one of routes")


def test_the_default_state_is_implicit(tmp_path: Path) -> None:
    data = contract(states=[{**MENU, "name": "default"}])
    message = error(data, tmp_path)
    assert message.startswith(f"{SOURCE}: states[0].name: 'default' is the implicit state")


def test_a_named_state_has_steps(tmp_path: Path) -> None:
    message = error(contract(states=[{**MENU, "steps": []}]), tmp_path)
    assert message.startswith(f"{SOURCE}: states[0].steps: ")


def test_duplicates_are_refused(tmp_path: Path) -> None:
    message = error(contract(viewports=["mobile", "mobile"]), tmp_path)
    assert "viewports: entries must be unique" in message
    message = error(contract(states=[MENU, MENU]), tmp_path)
    assert "states: entries must be unique" in message


def test_routes_start_with_a_slash(tmp_path: Path) -> None:
    message = error(contract(routes=["about"]), tmp_path)
    assert message.startswith(f"{SOURCE}: routes[0]: a route is a URL path; start it with '/'")


# motion: named transitions recorded as motion evidence --------------------------------

SLIDE = {
    "name": "menu-slide",
    "route": "/",
    "viewport": "mobile",
    "steps": [{"click": {"role": "button", "name": "Menu"}}],
    "frames": 8,
    "duration_ms": 700,
}


def with_motion(**changes: Any) -> dict[str, Any]:
    return contract(motion=[{**SLIDE, **changes}])


def test_a_transition_loads_with_its_frame_interval() -> None:
    loaded = Contract.model_validate(with_motion())
    slide = loaded.motion[0]
    assert (slide.name, slide.route, slide.viewport.name) == ("menu-slide", "/", "mobile")
    assert slide.steps[0].target == Locator(role="button", name="Menu")
    assert (slide.frames, slide.duration_ms, slide.step_ms) == (8, 700, 100)
    assert loaded.model_dump(mode="json")["motion"][0]["viewport"] == "mobile"
    assert Contract.model_validate(loaded.model_dump(mode="json")) == loaded


def test_motion_is_optional_and_a_page_load_needs_no_steps() -> None:
    assert Contract.model_validate(contract()).motion == []
    loaded = Contract.model_validate(contract(motion=[{**SLIDE, "steps": []}]))
    assert loaded.motion[0].steps == []


def test_a_transition_with_an_unknown_viewport(tmp_path: Path) -> None:
    message = error(with_motion(viewport="phablet"), tmp_path)
    assert message.startswith(
        f"{SOURCE}: motion[0].viewport: unknown viewport 'phablet' (known: desktop, mobile, tablet)"
    )


def test_a_transition_viewport_must_be_a_contract_viewport(tmp_path: Path) -> None:
    message = error(with_motion(viewport="tablet"), tmp_path)
    assert message.startswith(
        f"{SOURCE}: motion[0].viewport: not one of viewports ['desktop', 'mobile']"
    )


@pytest.mark.parametrize("frames", [0, 1, 33, -4])
def test_bad_frame_counts(tmp_path: Path, frames: int) -> None:
    message = error(with_motion(frames=frames), tmp_path)
    assert message.startswith(f"{SOURCE}: motion[0].frames: frames must be from 2 to 32")


def test_frames_must_be_a_number(tmp_path: Path) -> None:
    message = error(with_motion(frames="many"), tmp_path)
    assert message.startswith(f"{SOURCE}: motion[0].frames: must be a whole number; write one")


def test_the_frame_interval_is_whole_milliseconds(tmp_path: Path) -> None:
    message = error(with_motion(duration_ms=1000), tmp_path)
    assert message.startswith(
        f"{SOURCE}: motion[0].duration_ms: duration_ms must be a multiple of frames - 1 = 7 "
        "(whole ms between frames); use 1001"
    )
    assert "motion[0].duration_ms: duration_ms must be from 1 to 60000" in error(
        with_motion(duration_ms=0), tmp_path
    )


def test_a_transition_route_steps_and_name_are_checked_like_a_states(tmp_path: Path) -> None:
    assert error(with_motion(route="/shop/"), tmp_path).startswith(
        f"{SOURCE}: motion[0].route: not one of routes"
    )
    assert error(with_motion(steps=[{"click": {}}]), tmp_path).startswith(
        f"{SOURCE}: motion[0].steps[0]: click needs a locator"
    )
    assert error(with_motion(steps=[{"click": {"test_id": "secret"}}]), tmp_path).startswith(
        f"{SOURCE}: motion[0].steps[0].click.test_id: test id 'secret' is not listed"
    )
    assert "motion: entries must be unique" in error(contract(motion=[SLIDE, SLIDE]), tmp_path)
    assert error(with_motion(name="Menu Slide"), tmp_path).startswith(
        f"{SOURCE}: motion[0].name: must match ^[a-z0-9][a-z0-9-]*$; change it to match"
    )


# one vocabulary: public locators, viewport-scoped states, the old step shape -----------


@pytest.mark.parametrize("kind", ["title", "placeholder", "alt"])
def test_title_placeholder_and_alt_are_public_locators(kind: str) -> None:
    loaded = Contract.model_validate(with_steps({"click": {kind: "Gift wrap"}}))
    assert loaded.states[0].steps[0].locator == Locator(**{kind: "Gift wrap"})
    assert loaded.states[0].steps[0].dump() == {"click": {kind: "Gift wrap"}}


def test_a_css_locator_is_sealed_only(tmp_path: Path) -> None:
    message = error(with_steps({"click": {"css": "#menu"}}), tmp_path)
    assert message.startswith(
        f"{SOURCE}: states[0].steps[0].click.css: a css locator is for sealed checks only"
    )
    assert "{title}, {placeholder}, {alt}" in message
    message = error(with_motion(steps=[{"wait_for": {"css": ".slide"}}]), tmp_path)
    assert message.startswith(f"{SOURCE}: motion[0].steps[0].wait_for.css: a css locator")


def test_a_state_may_name_its_viewports() -> None:
    drawer = {**MENU, "name": "drawer", "viewports": ["mobile"]}
    loaded = Contract.model_validate(contract(states=[MENU, drawer]))
    assert [v.name for v in loaded.viewports_of(loaded.states[0])] == ["desktop", "mobile"]
    assert [v.name for v in loaded.viewports_of(loaded.states[1])] == ["mobile"]
    assert loaded.model_dump(mode="json")["states"][1]["viewports"] == ["mobile"]
    assert Contract.model_validate(loaded.model_dump(mode="json")) == loaded


def test_a_state_viewport_must_be_known_and_the_contracts(tmp_path: Path) -> None:
    message = error(contract(states=[{**MENU, "viewports": ["phablet"]}]), tmp_path)
    assert message.startswith(
        f"{SOURCE}: states[0].viewports[0]: unknown viewport 'phablet' "
        "(known: desktop, mobile, tablet); use one of them"
    )
    message = error(contract(states=[{**MENU, "viewports": ["tablet"]}]), tmp_path)
    assert message.startswith(
        f"{SOURCE}: states[0].viewports[0]: not one of viewports ['desktop', 'mobile']"
    )
    message = error(contract(states=[{**MENU, "viewports": []}]), tmp_path)
    assert message.startswith(f"{SOURCE}: states[0].viewports: ")
    message = error(contract(states=[{**MENU, "viewports": ["mobile", "mobile"]}]), tmp_path)
    assert "states[0].viewports: entries must be unique" in message


def test_goto_and_reload_are_steps_and_goto_names_a_contract_route(tmp_path: Path) -> None:
    loaded = Contract.model_validate(with_steps({"goto": "/about/"}, {"reload": {}}))
    assert [s.dump() for s in loaded.states[0].steps] == [{"goto": "/about/"}, {"reload": None}]
    message = error(with_steps({"goto": "/shop/"}), tmp_path)
    assert message.startswith(f"{SOURCE}: states[0].steps[0].goto: not one of routes")


def test_the_old_step_shape_says_how_to_write_it(tmp_path: Path) -> None:
    old = {"action": "press", "locator": {"label": "New todo"}, "value": "Enter"}
    message = error(with_steps(old), tmp_path)
    assert message.startswith(
        f"{SOURCE}: states[0].steps[0]: a step is written as its action and its target"
    )
    assert message.endswith("write this one as {press: {label: New todo}, key: Enter}")
