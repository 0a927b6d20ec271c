"""snapshot(): joining the isolated world's elements to chromium's accessibility tree.

A scripted DevTools session stands in for chromium here, to make the DOM change between
the two readings on purpose (tests/render/test_capture.py covers the real browser).
"""

from __future__ import annotations

from typing import Any

from recon.render.snapshot import TRIES, snapshot


def element(backend: int, name: str, *children: dict[str, Any]) -> dict[str, Any]:
    return {"nodeType": 1, "backendNodeId": backend, "nodeName": name, "children": list(children)}


def document(*children: dict[str, Any]) -> dict[str, Any]:
    return {
        "root": {
            "nodeType": 9,
            "backendNodeId": 1,
            "nodeName": "#document",
            "children": [{"nodeType": 10, "backendNodeId": 2, "nodeName": "html"}, *children],
        }
    }


# html > body > (h1, a shadow host whose shadow tree is not a child, a template, p)
BEFORE = document(
    element(
        3,
        "HTML",
        element(
            4,
            "BODY",
            element(5, "H1", {"nodeType": 3, "backendNodeId": 6, "nodeName": "#text"}),
            {**element(7, "DIV"), "shadowRoots": [element(8, "I")]},
            {**element(9, "TEMPLATE"), "templateContent": element(10, "BUTTON")},
            element(11, "P"),
        ),
    ),
)
# the page inserted a <div> before the <h1>: indexes no longer line up
AFTER = document(
    element(
        3,
        "HTML",
        element(
            4,
            "BODY",
            element(12, "DIV"),
            element(5, "H1"),
            element(7, "DIV"),
            element(9, "TEMPLATE"),
            element(11, "P"),
        ),
    ),
)
AX = {
    "nodes": [
        {"backendDOMNodeId": 1, "role": {"value": "RootWebArea"}, "name": {"value": "T"}},
        {"backendDOMNodeId": 3, "ignored": True, "role": {"value": "none"}},
        {"backendDOMNodeId": 5, "role": {"value": "heading"}, "name": {"value": " Hi \n there "}},
        {"backendDOMNodeId": 11, "role": {"value": "paragraph"}, "name": {"value": ""}},
        {"role": {"value": "InlineTextBox"}, "name": {"value": "Hi"}},
    ]
}


class ScriptedCDP:
    def __init__(self, documents: list[dict[str, Any]]) -> None:
        self.documents = documents
        self.calls: list[str] = []

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.calls.append(method)
        if method == "DOM.getDocument":
            return self.documents.pop(0) if len(self.documents) > 1 else self.documents[0]
        assert method == "Accessibility.getFullAXTree"
        return AX


def seen() -> list[dict[str, Any]]:
    """What the isolated world reports: visible elements with their document-order index."""
    return [
        {"index": i, "tag": tag, "role": "", "name": "", "text": ""}
        for i, tag in ((0, "html"), (1, "body"), (2, "h1"), (5, "p"))
    ]


def test_elements_get_the_role_and_name_of_the_node_at_their_index() -> None:
    cdp = ScriptedCDP([BEFORE])
    dom, failure = snapshot(cdp, lambda _: seen())  # type: ignore[arg-type]
    assert failure is None
    assert [(e["tag"], e["role"], e["name"]) for e in dom] == [
        ("html", "", ""),  # ignored by the tree
        ("body", "", ""),  # not in the tree
        ("h1", "heading", "Hi there"),
        ("p", "paragraph", ""),
    ]
    assert all("index" not in e for e in dom)


def test_a_dom_that_changed_between_readings_is_read_again() -> None:
    cdp = ScriptedCDP([AFTER, BEFORE])
    dom, failure = snapshot(cdp, lambda _: seen())  # type: ignore[arg-type]
    assert failure is None and cdp.calls.count("DOM.getDocument") == 2
    assert dom[2]["name"] == "Hi there"


def test_a_dom_that_keeps_changing_leaves_names_empty_and_says_so() -> None:
    cdp = ScriptedCDP([AFTER])
    dom, failure = snapshot(cdp, lambda _: seen())  # type: ignore[arg-type]
    assert failure is not None and "kept changing its DOM" in failure
    assert cdp.calls == ["DOM.getDocument"] * TRIES
    assert {(e["role"], e["name"]) for e in dom} == {("", "")}
