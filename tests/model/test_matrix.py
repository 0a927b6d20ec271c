"""The matrix of a contract: every route × viewport by default, plus each state × viewport."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from recon.model import Contract, load_yaml
from recon.model.matrix import Point, evidence_still, points
from recon.model.viewport import VIEWPORTS
from recon.pipeline.graph import Graph
from recon.pipeline.runtime import Runtime
from recon.project.loader import Project
from recon.project.settings import Settings
from tests.conftest import copy_project

ROOT = Path(__file__).resolve().parents[2]

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


def test_a_state_is_a_point_only_at_the_viewports_it_names() -> None:
    data = CONTRACT.model_dump(mode="json")
    drawer = {**data["states"][0], "name": "drawer", "viewports": ["mobile"]}
    scoped = Contract.model_validate({**data, "states": [*data["states"], drawer]})
    ids = [p.id for p in points(scoped)]
    assert ids[-3:] == [
        "blog~post.desktop.menu-open",
        "blog~post.mobile.menu-open",
        "blog~post.mobile.drawer",
    ]
    assert "blog~post.desktop.drawer" not in ids
    # a state that names no viewports keeps the params (and cell keys) it had before
    assert [p.params() for p in points(scoped)][:-1] == [p.params() for p in points(CONTRACT)]


def test_ids_are_stable_across_loads() -> None:
    again = Contract.model_validate(CONTRACT.model_dump(mode="json"))
    assert [p.id for p in points(again)] == [p.id for p in points(CONTRACT)]
    assert [p.params() for p in points(again)] == [p.params() for p in points(CONTRACT)]


def test_a_mobile_only_state_is_captured_and_graded_at_mobile_only(tmp_path: Path) -> None:
    """The DAG of the demo release, with todomvc's state scoped to mobile: its oracle,
    capture and grade cells carry the state's point at mobile and nowhere else."""
    project = copy_project(tmp_path / "p")
    contract = project / "cases" / "todomvc" / "public" / "contract.yaml"
    text = contract.read_text()
    scoped = text.replace("    route: /\n", "    route: /\n    viewports: [mobile]\n", 1)
    assert scoped != text
    contract.write_text(scoped)
    opened = Project.open(project, Settings.from_env())
    rt = Runtime(opened)
    graph = Graph(opened, rt.stat, rt.codes)
    graph.release(opened.releases["demo"])
    oracles = sorted(c for c in graph.cells if c.startswith("oracle:todomvc.") and "two-todos" in c)
    assert oracles == ["oracle:todomvc.root.mobile.two-todos"]
    for kind in ("capture", "grade"):
        cells = [c for c in graph.cells.values() if c.kind == kind and ".todomvc." in c.name]
        assert cells, kind
        for cell in cells:
            states = [(p["viewport"]["name"], p["state"]) for p in cell.params["points"]]
            assert [s for s in states if s[1] == "two-todos"] == [("mobile", "two-todos")]
            assert len(states) == 4  # three default points and the one state point


def test_a_point_is_a_frozen_strict_model_and_its_params_are_its_dump() -> None:
    menu = points(CONTRACT)[-1]
    with pytest.raises(ValidationError):
        menu.state = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Point.model_validate(menu.params() | {"colour": "red"})
    assert menu.params() == menu.model_dump(mode="json")
    assert Point("/", VIEWPORTS["mobile"]) == Point(route="/", viewport=VIEWPORTS["mobile"])
    assert len({*points(CONTRACT), *points(CONTRACT)}) == len(points(CONTRACT))  # hashable


def test_the_params_of_a_point_hash_as_they_did_when_it_was_a_dataclass() -> None:
    """Cell keys hash ``params()``: these are the bytes the matrix gave before it was a
    model (``recon/project/matrix.py``), so no oracle, capture or grade cell re-keys."""
    menu = points(CONTRACT)[-1].params()
    assert json.dumps(menu, sort_keys=True) == (
        '{"route": "/blog/post/", "state": "menu-open", "steps": [{"click": {"test_id": '
        '"nav"}}, {"key": "Tab", "press": null}], "viewport": {"height": 844, "name": '
        '"mobile", "width": 390}}'
    )


def test_the_evidence_still_of_each_kind_of_point() -> None:
    stills = {p.id: p.evidence_still for p in points(CONTRACT)}
    assert stills == {
        "root.desktop.default": "desktop.png",
        "root.mobile.default": "mobile.png",
        "blog~post.desktop.default": "blog~post/desktop.png",
        "blog~post.mobile.default": "blog~post/mobile.png",
        "blog~post.desktop.menu-open": "desktop--menu-open.png",
        "blog~post.mobile.menu-open": "mobile--menu-open.png",
    }
    assert {pid: evidence_still(pid) for pid in stills} == stills  # from the id alone
    assert evidence_still("about.html.tablet.default") == "about.html/tablet.png"


def test_the_evidence_still_is_what_the_frozen_cases_hold() -> None:
    """Every point of every case in the repository has its still under the name the helper
    gives (``recon curate evidence`` wrote them by it), and no still is left unnamed."""
    for case in sorted((ROOT / "cases").iterdir()):
        contract = load_yaml(Contract, case / "public" / "contract.yaml")
        evidence = case / "public" / "evidence"
        named = {p.evidence_still for p in points(contract)}
        held = {
            str(f.relative_to(evidence)) for f in evidence.rglob("*.png") if "motion" not in f.parts
        }
        assert named == held, case.name
