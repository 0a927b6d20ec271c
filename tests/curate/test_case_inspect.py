"""`recon case inspect`: chromium's roles and names, and what a region selector matches."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.cli import main
from recon.grade import selectors
from recon.model.grading import Region
from recon.render.inspect import outline


def _node(
    node_id: int, role: str, name: str = "", parent: int | None = None, **kw: object
) -> dict[str, object]:
    node: dict[str, object] = {
        "nodeId": str(node_id),
        "role": {"value": role},
        "name": {"value": name},
    }
    if parent is not None:
        node["parentId"] = str(parent)
    node.update(kw)
    return node


def test_outline_drops_ignored_nodes_and_text_leaves_and_keeps_depth() -> None:
    nodes = [
        _node(1, "RootWebArea", "Page", childIds=["2"]),
        _node(2, "none", parent=1, ignored=True, childIds=["3"]),
        _node(3, "image", "Logo", parent=2, backendDOMNodeId=7, childIds=["4"]),
        _node(4, "StaticText", "Logo", parent=3),
    ]
    lines = [n.line() for n in outline(nodes, {7: "img"})]
    assert lines == ["RootWebArea 'Page'", "  <img> image 'Logo'"]


def test_a_role_that_matches_nothing_lists_the_roles_present() -> None:
    dom = [
        {"tag": "img", "role": "image", "name": "a", "text": "", "box": [0, 0, 10, 10]},
        {"tag": "p", "role": "paragraph", "name": "", "text": "x", "box": [0, 10, 10, 10]},
    ]
    region = Region(id="r", selector="img[role=img]")
    _, _, problem = selectors.find(region, dom)
    assert problem is not None and "roles present on <img> elements: image;" in problem


@pytest.mark.browser
def test_inspect_prints_the_tree_and_the_matches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cases").mkdir()
    assert main(["--root", str(tmp_path), "case", "new", "my-page", "--no-evidence"]) == 0
    capsys.readouterr()
    code = main(["--root", str(tmp_path), "case", "inspect", "my-page", "--viewport", "mobile",
                 "--selector", "h1"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "(mobile, 390x844)" in out
    assert "<h1> heading 'Replace me'" in out
    assert "<main> main" in out
    assert "selector 'h1': 1 element(s) in the DOM snapshot" in out
    assert " *0: <h1> heading 'Replace me' box [" in out
