"""snapshot(): joining the isolated world's elements to chromium's accessibility tree.

A scripted DevTools session stands in for chromium here, to make the DOM change between
the two readings on purpose (tests/render/test_capture.py covers the real browser); the
paint and ink records are read from real chromium captures.
"""

from __future__ import annotations

import base64
import os
from typing import Any

import pytest
from playwright.sync_api import Browser

from recon.render import ORIGIN, Viewport
from recon.render import snapshot as snapshot_module
from recon.render.browser import chromium_path
from recon.render.capture import capture
from recon.render.snapshot import TRIES, snapshot

needs_chromium = pytest.mark.skipif(
    not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
)


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


# --- in chromium: every place an image is painted, and how text reaches the screen -------

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
DATA = "data:image/png;base64," + base64.b64encode(PNG).decode()
PAINTS = f"""<!doctype html><meta charset="utf-8"><style>
  body {{ margin: 0; font: 16px sans-serif }}
  .bg {{ height: 40px; background: linear-gradient(red, blue), url("{DATA}"),
         image-set(url(a.png) 1x, url(b.png) 2x) }}
  .pre::before {{ content: ""; display: block; height: 10px; background: url(before.png) }}
  .border {{ border: 4px solid; border-image: url(border.png) 4 }}
  ul {{ list-style-image: url(dot.png) }}
  .faint {{ color: rgba(0, 0, 0, 0.01) }}
  .half {{ opacity: 0.5 }} .half p {{ opacity: 0.5; background: rgb(0, 0, 80) }}
  .sr {{ position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0) }}
  .fill {{ -webkit-text-fill-color: transparent }}
</style>
<div class="bg"></div><div class="pre">x</div><div class="border">b</div>
<ul><li id="li"><a id="a" href="#">item</a></li></ul>
<img id="img" src="a.png" srcset="a.png 1x, b.png 2x" width="20" height="20">
<picture><source srcset="c.png"><img id="pic" src="a.png" width="20" height="20"></picture>
<input id="input" type="image" src="i.png" width="20" height="20">
<video id="video" poster="{DATA}" width="40" height="20"></video>
<object id="object" data="o.png" type="image/png" width="20" height="20"></object>
<embed id="embed" src="e.png" type="image/png" width="20" height="20">
<canvas id="canvas" width="20" height="20"></canvas>
<svg width="40" height="20"><image id="svgimage" href="{DATA}" width="20" height="20"/>
  <image id="xlink" xlink:href="x.png" x="20" width="20" height="20"/></svg>
<p id="faint" class="faint">ghost</p><div class="half"><p id="half">dim</p></div>
<span id="sr" class="sr">hidden label</span><p id="fill" class="fill">no fill</p>"""


def paints_of(dom: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(tag, via, url with the origin cut) of every paint record, in document order."""
    return [
        (e["tag"], p["via"], p["url"].replace(ORIGIN + "/", "/")) for e in dom for p in e["paints"]
    ]


def ink_of(dom: list[dict[str, Any]], text: str) -> dict[str, Any]:
    return next(e["ink"] for e in dom if e["text"] == text)


def shot(browser: Browser, html: str) -> list[dict[str, Any]]:
    images = ("a", "b", "c", "before", "border", "dot", "i", "o", "e", "x")
    files = {"index.html": html.encode(), **{f"{name}.png": PNG for name in images}}
    return capture(browser, files.get, "/", Viewport("small", 640, 480)).dom


@pytest.mark.browser
@needs_chromium
def test_every_way_of_painting_an_image_is_recorded(browser: Browser) -> None:
    dom = shot(browser, PAINTS)
    assert paints_of(dom) == [
        ("div", "background", DATA),
        ("div", "background", "/a.png"),  # every layer, every image-set option
        ("div", "background", "/b.png"),
        ("div", "background::before", "/before.png"),
        ("div", "border-image", "/border.png"),
        ("li", "list-style", "/dot.png"),  # not its <a>: the property is inherited
        ("img", "img", "/a.png"),  # the srcset choice at a device scale factor of 1
        ("img", "img", "/c.png"),  # <picture>: the <source> chosen
        ("input", "input", "/i.png"),
        ("video", "poster", DATA),
        ("object", "object", "/o.png"),
        ("embed", "embed", "/e.png"),
        ("canvas", "canvas", ""),
        ("image", "svg-image", DATA),
        ("image", "svg-image", "/x.png"),  # xlink:href
    ]
    assert shot(browser, PAINTS) == dom  # deterministic


SHADOW = f"""<!doctype html><meta charset="utf-8"><style>body {{ margin: 0 }}</style>
<p>light text</p><div id="host"></div><div id="bare" style="display: contents"></div><script>
  const open = document.getElementById('host').attachShadow({{mode: 'open'}});
  open.innerHTML = '<img src="{DATA}" width="30" height="20"><span id="inner"></span>';
  open.getElementById('inner').attachShadow({{mode: 'open'}}).innerHTML =
    '<canvas width="10" height="10"></canvas>';
  document.getElementById('bare').attachShadow({{mode: 'open'}}).innerHTML =
    '<div style="width: 40px; height: 8px; background: url(a.png)"></div>';
</script>"""


@pytest.mark.browser
@needs_chromium
def test_images_painted_inside_open_shadow_trees_are_recorded_with_their_boxes(
    browser: Browser,
) -> None:
    dom = shot(browser, SHADOW)
    host = next(e for e in dom if e["tag"] == "div" and e["paints"])
    assert [(p["tag"], p["via"], p["url"]) for p in host["paints"]] == [
        ("img", "img", DATA),
        ("canvas", "canvas", ""),  # a shadow tree inside the shadow tree
    ]
    assert host["paints"][0]["box"][2:] == [30, 20]
    bare = dom[0]["paints"]  # a host without a box (display: contents) hands them to <html>
    assert [(p["tag"], p["url"]) for p in bare] == [("div", f"{ORIGIN}/a.png")]
    assert bare[0]["box"][2:] == [40, 8]


@pytest.mark.browser
@needs_chromium
def test_how_text_reaches_the_screen_is_recorded(browser: Browser) -> None:
    dom = shot(browser, PAINTS)
    assert ink_of(dom, "ghost")["fill"] == [0, 0, 0, 0.01]
    half = ink_of(dom, "dim")
    assert half["opacity"] == 0.25 and half["backdrop"] == [0, 0, 80]  # multiplied down
    assert ink_of(dom, "hidden label")["area"] <= 1  # clipped to a visually-hidden pixel
    assert ink_of(dom, "no fill")["fill"][3] == 0  # -webkit-text-fill-color, not color
    item = ink_of(dom, "item")
    assert item["size"] == 16 and item["area"] > 100 and item["backdrop"] == [255, 255, 255]
    assert (item["box"][2] + 1) * (item["box"][3] + 1) >= item["area"] > 0  # rounded box
    assert all(e["ink"] is None for e in dom if not e["text"])


@pytest.mark.browser
@needs_chromium
def test_data_urls_past_the_budget_are_cut(
    browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_module, "URL_BUDGET", len(DATA) + 10)  # room for one
    dom = shot(browser, PAINTS)
    data = [p for e in dom for p in e["paints"] if p["url"].startswith("data:")]
    assert [p.get("truncated", False) for p in data] == [False, True, True]
    assert data[0]["url"] == DATA and len(data[1]["url"]) == snapshot_module.KEPT_URL_CHARS
