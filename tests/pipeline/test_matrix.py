"""The matrix of a contract: every route × viewport by default, plus each state × viewport."""

from __future__ import annotations

import json

from recon.model import Contract
from recon.pipeline.matrix import Point, points

CONTRACT = Contract.model_validate(
    {
        "routes": ["/", "/blog/post/"],
        "viewports": ["desktop", "mobile"],
        "test_ids": ["nav"],
        "states": [
            {
                "name": "menu-open",
                "route": "/blog/post/",
                "steps": [{"click": {"test_id": "nav"}}, {"press": None, "key": "Tab"}],
            }
        ],
        "build": {"output": "site"},
    }
)


def test_points_and_their_ids() -> None:
    assert [p.id for p in points(CONTRACT)] == [
        "root.desktop.default",
        "root.mobile.default",
        "blog~post.desktop.default",
        "blog~post.mobile.default",
        "blog~post.desktop.menu-open",
        "blog~post.mobile.menu-open",
    ]


def test_default_points_have_no_steps_and_states_carry_theirs() -> None:
    by_id = {p.id: p for p in points(CONTRACT)}
    assert by_id["root.mobile.default"].steps == ()
    assert by_id["root.mobile.default"].viewport.width == 390
    menu = by_id["blog~post.mobile.menu-open"]
    assert menu.route == "/blog/post/"
    assert [s.action for s in menu.steps] == ["click", "press"]


def test_params_are_canonical_json_and_round_trip() -> None:
    for point in points(CONTRACT):
        params = point.params()
        assert json.loads(json.dumps(params)) == params
        assert Point.from_params(params) == point
    menu = points(CONTRACT)[-1].params()
    assert menu["viewport"] == {"name": "mobile", "width": 390, "height": 844}
    assert menu["steps"] == [{"click": {"test_id": "nav"}}, {"press": None, "key": "Tab"}]


def test_ids_are_stable_across_loads() -> None:
    again = Contract.model_validate(CONTRACT.model_dump(mode="json"))
    assert [p.id for p in points(again)] == [p.id for p in points(CONTRACT)]
    assert [p.params() for p in points(again)] == [p.params() for p in points(CONTRACT)]
