"""Sealed checks and workflows, resolved by playwright, immune to page overrides."""

from __future__ import annotations

import os
from typing import Any

import pytest
from playwright.sync_api import Browser

from recon.grade.workflow import key
from recon.model.grading import Assertion, Workflow
from recon.render import CheckResult, Viewport, run_checks, run_workflow
from recon.render.browser import chromium_path
from recon.render.capture import capture
from recon.render.page import load, open_page
from recon.render.snapshot import _DOM_JS
from tests.conftest import reader

needs_chromium = pytest.mark.skipif(
    not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
)

VIEWPORT = Viewport("small", 640, 480)

PAGE = """<!doctype html><meta charset="utf-8">
<style>h1 { color: rgb(200, 10, 10); } .item { margin: 0; }</style>
<h1>Shop</h1>
<nav aria-label="main"><a href="/">Home</a><a href="/cart/">Cart</a></nav>
<ul><li class="item">apple</li><li class="item">pear</li><li class="item">plum</li></ul>
<button data-testid="buy" title="Purchase">Buy now</button>
<label>Quantity <input value="2"></label>
<p hidden>secret</p>
"""

HOSTILE = """<script>
  document.querySelector = () => null;
  document.querySelectorAll = () => [];
  Element.prototype.querySelector = () => null;
  Element.prototype.getBoundingClientRect = () => new DOMRect(0, 0, 0, 0);
  Element.prototype.getClientRects = () => [];
  Element.prototype.getAttribute = () => 'forged';
  window.getComputedStyle = () => ({getPropertyValue: () => 'forged'});
  window.fetch = () => Promise.reject(new Error('no'));
</script>"""


def a(ident: str, locator: dict[str, str], expect: str, value: Any = None, **kw: Any) -> Assertion:
    return Assertion.model_validate(
        {"id": ident, "locator": locator, "expect": expect, "value": value, **kw}
    )


CHECKS = [
    a("heading", {"role": "heading", "name": "Shop"}, "visible"),
    a("nav", {"role": "navigation", "name": "main"}, "visible"),
    a("text", {"text": "Buy now"}, "visible"),
    a("buy", {"test_id": "buy"}, "text", "Buy"),
    a("items", {"css": "li.item"}, "count", 3),
    a("links", {"role": "link"}, "count", 2),
    a("title", {"test_id": "buy"}, "attribute", "Purchase", name="title"),
    a("qty", {"label": "Quantity"}, "value", "2"),
    a("red", {"role": "heading", "name": "Shop"}, "css", "rgb(200, 10, 10)", name="color"),
    a("secret-hidden", {"text": "secret"}, "hidden"),
    a("absent", {"text": "Checkout"}, "visible"),
    a("shown", {"text": "Buy now"}, "hidden"),
    a("too-many", {"css": "li.item"}, "count", 4),
    a("wrong-text", {"test_id": "buy"}, "text", "Sell"),
    a("wrong-attr", {"test_id": "buy"}, "attribute", "Sell", name="title"),
    a("wrong-colour", {"role": "heading", "name": "Shop"}, "css", "rgb(0, 0, 0)", name="color"),
    a("bad-css", {"css": "li[["}, "count", 1),
]
EXPECTED = {
    "heading": True,
    "nav": True,
    "text": True,
    "buy": True,
    "items": True,
    "links": True,
    "title": True,
    "qty": True,
    "red": True,
    "secret-hidden": True,
    "absent": False,
    "shown": False,
    "too-many": False,
    "wrong-text": False,
    "wrong-attr": False,
    "wrong-colour": False,
    "bad-css": False,
}


@pytest.mark.browser
@needs_chromium
def test_checks_pass_and_fail_as_expected(browser: Browser) -> None:
    results = run_checks(browser, reader({"index.html": PAGE}), "/", VIEWPORT, CHECKS)
    assert {r.id: r.passed for r in results} == EXPECTED
    observed = {r.id: r.observed for r in results}
    assert observed["items"] == "3"
    assert observed["too-many"] == "3"
    assert observed["wrong-text"] == "Buy now"
    assert observed["wrong-colour"] == "rgb(200, 10, 10)"
    assert observed["absent"] == "no matching element"
    assert observed["bad-css"].startswith("error: ")


@pytest.mark.browser
@needs_chromium
def test_page_overriding_dom_apis_does_not_change_results(browser: Browser) -> None:
    plain = run_checks(browser, reader({"index.html": PAGE}), "/", VIEWPORT, CHECKS)
    hostile_build = reader({"index.html": HOSTILE + PAGE})
    hostile = run_checks(browser, hostile_build, "/", VIEWPORT, CHECKS)
    assert hostile == plain


# Overrides, in the page's own world, of every API a probe, a locator or the snapshot could
# call (prototypes, getters, iterators, builtins): run in an isolated world, none of them
# reaches the harness.
EVERYTHING = """<script>
(() => {
  const forged = () => 'forged';
  document.querySelector = () => null;
  document.querySelectorAll = () => [];
  for (const proto of [Document.prototype, Element.prototype, DocumentFragment.prototype]) {
    proto.querySelector = () => null;
    proto.querySelectorAll = () => [];
  }
  Document.prototype.getElementById = () => null;
  Document.prototype.getElementsByTagName = () => [];
  Element.prototype.getBoundingClientRect = () => new DOMRect(0, 0, 0, 0);
  Element.prototype.getClientRects = () => [];
  Element.prototype.checkVisibility = () => false;
  Element.prototype.getAttribute = forged;
  Element.prototype.hasAttribute = () => false;
  Element.prototype.matches = () => false;
  Element.prototype.closest = () => null;
  Node.prototype.contains = () => false;
  Node.prototype.compareDocumentPosition = () => 0;
  window.getComputedStyle = () => ({getPropertyValue: forged, color: 'forged'});
  CSSStyleDeclaration.prototype.getPropertyValue = forged;
  const getters = [
    [Node.prototype, 'textContent'], [Node.prototype, 'nodeValue'],
    [Node.prototype, 'childNodes'], [Node.prototype, 'parentNode'],
    [Node.prototype, 'nodeType'], [Element.prototype, 'tagName'],
    [Element.prototype, 'children'], [Element.prototype, 'id'],
    [HTMLElement.prototype, 'innerText'], [HTMLElement.prototype, 'hidden'],
    [HTMLInputElement.prototype, 'value'], [Element.prototype, 'shadowRoot'],
  ];
  for (const [proto, name] of getters) {
    Object.defineProperty(proto, name, {get: forged, set() {}, configurable: true});
  }
  for (const name of ['scrollX', 'scrollY', 'innerWidth', 'innerHeight', 'devicePixelRatio']) {
    Object.defineProperty(window, name, {get: () => 12345, configurable: true});
  }
  Array.prototype.map = function map() { return ['forged']; };
  Array.prototype.filter = function filter() { return []; };
  Array.prototype.some = () => true;
  Array.prototype.every = () => false;
  Array.prototype.includes = () => true;
  Array.prototype.indexOf = () => 0;
  Array.prototype.join = forged;
  Array.prototype.push = () => 0;
  Array.prototype[Symbol.iterator] = function* none() {};
  NodeList.prototype[Symbol.iterator] = function* none() {};
  HTMLCollection.prototype[Symbol.iterator] = function* none() {};
  Array.from = () => [];
  Array.isArray = () => false;
  JSON.stringify = () => '"forged"';
  JSON.parse = () => ({});
  Object.keys = () => [];
  Object.entries = () => [];
  Object.assign = (target) => target;
  String.prototype.trim = forged;
  String.prototype.replace = forged;
  String.prototype.toLowerCase = forged;
  String.prototype.slice = forged;
  String.prototype.split = () => [];
  RegExp.prototype.test = () => true;
  RegExp.prototype.exec = () => null;
  Math.round = () => 0;
  Math.max = () => 0;
  Number.isFinite = () => false;
})();
</script>"""

COUNTER_KEEPING_ITS_OWN = """<!doctype html><meta charset="utf-8">
<button>Add</button> <output aria-label="count">0</output>
<script>
  // The page's own logic keeps what it needs before the overrides below replace it.
  const out = document.querySelector('output');
  const show = Object.getOwnPropertyDescriptor(Node.prototype, 'textContent').set;
  let n = Number(localStorage.getItem('n') || '0');
  show.call(out, String(n));
  document.querySelector('button').addEventListener('click', () => {
    n += 1;
    show.call(out, String(n));
    localStorage.setItem('n', String(n));
  });
</script>"""


@pytest.mark.browser
@needs_chromium
def test_a_page_overriding_every_api_a_probe_could_use_changes_no_result(
    browser: Browser,
) -> None:
    """The same page with and without EVERYTHING overridden: the same check results, the
    same workflow rows, the same DOM snapshot (and the overrides are real: the page's own
    world sees them)."""
    plain, hostile = (
        reader({"index.html": PAGE}),
        reader({"index.html": PAGE.replace("<style>", EVERYTHING + "<style>")}),
    )
    results = run_checks(browser, plain, "/", VIEWPORT, CHECKS)
    assert {r.id: r.passed for r in results} == EXPECTED
    assert run_checks(browser, hostile, "/", VIEWPORT, CHECKS) == results
    shot = capture(browser, plain, "/", VIEWPORT)
    forged = capture(browser, hostile, "/", VIEWPORT)
    assert shot.failure is None and forged.failure is None
    assert forged.dom == shot.dom and len(shot.dom) > 10
    assert (forged.full_png, forged.viewport_png) == (shot.full_png, shot.viewport_png)

    flow = reader({"index.html": COUNTER_KEEPING_ITS_OWN})
    flow_forged = reader({"index.html": COUNTER_KEEPING_ITS_OWN + EVERYTHING})
    kept = run_workflow(browser, flow, FLOW, VIEWPORT)
    assert passed(kept.rows[key("count", "two", preserved=True)]) == [True]
    assert run_workflow(browser, flow_forged, FLOW, VIEWPORT).rows == kept.rows

    # The overrides are real: the snapshot script run in the page's own world (a CDP
    # evaluation without a context id) is fooled, as every probe would be there.
    with open_page(browser, hostile, VIEWPORT) as session:
        load(session, "/", 5000)
        expression = f"({_DOM_JS})(2000)"
        reply = session.cdp.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True}
        )
        assert reply["result"].get("value") != session.world.evaluate(expression)


@pytest.mark.browser
@needs_chromium
def test_missing_route_fails_checks_without_raising(browser: Browser) -> None:
    results = run_checks(browser, reader({}), "/", VIEWPORT, CHECKS[:1], timeout_ms=200)
    assert results == [CheckResult("heading", False, "no matching element")]


COUNTER = """<!doctype html><meta charset="utf-8">
<button>Add</button> <output aria-label="count">0</output>
<script>
  const out = document.querySelector('output');
  const keep = %s;
  out.textContent = keep ? (localStorage.getItem('n') || '0') : '0';
  document.querySelector('button').addEventListener('click', () => {
    out.textContent = String(Number(out.textContent) + 1);
    if (keep) localStorage.setItem('n', out.textContent);
  });
</script>"""

FLOW = Workflow.model_validate(
    {
        "id": "count",
        "steps": [
            {"click": {"role": "button", "name": "Add"}},
            {
                "id": "one",
                "assertions": [
                    {"id": "n1", "locator": {"css": "output"}, "expect": "text", "value": "1"}
                ],
            },
            {"click": {"role": "button", "name": "Add"}},
            {
                "id": "two",
                "preserve": "reload",
                "assertions": [
                    {"id": "n2", "locator": {"css": "output"}, "expect": "text", "value": "2"}
                ],
            },
            {"click": {"role": "button", "name": "Remove"}},
            {
                "id": "never",
                "assertions": [{"id": "n3", "locator": {"css": "output"}, "expect": "visible"}],
            },
        ],
    }
)


def passed(rows: list[dict[str, Any]]) -> list[bool]:
    return [bool(r["passed"]) for r in rows]


@pytest.mark.browser
@needs_chromium
def test_workflow_checkpoints_preservation_and_a_failed_step(browser: Browser) -> None:
    kept = run_workflow(browser, reader({"index.html": COUNTER % "true"}), FLOW, VIEWPORT)
    assert passed(kept.rows[key("count", "one")]) == [True]
    assert passed(kept.rows[key("count", "two")]) == [True]
    assert passed(kept.rows[key("count", "two", preserved=True)]) == [True]
    assert key("count", "never") not in kept.rows  # the step before it failed
    assert kept.failure == "steps[4] click: no matching element"
    assert kept.screenshots[key("count", "one")].startswith(b"\x89PNG")

    lost = run_workflow(browser, reader({"index.html": COUNTER % "false"}), FLOW, VIEWPORT)
    assert passed(lost.rows[key("count", "two")]) == [True]
    assert passed(lost.rows[key("count", "two", preserved=True)]) == [False]


@pytest.mark.browser
@needs_chromium
def test_workflow_results_ignore_page_overrides(browser: Browser) -> None:
    plain = run_workflow(browser, reader({"index.html": COUNTER % "true"}), FLOW, VIEWPORT)
    hostile = run_workflow(
        browser, reader({"index.html": HOSTILE.replace("document.querySelector = () => null;", "")
                         + COUNTER % "true"}), FLOW, VIEWPORT
    )  # fmt: skip
    assert hostile.rows == plain.rows


# Real-page shapes that broke centre-point probes (issue 11) --------------------------

MOBILE = Viewport("mobile", 390, 844)

WIDE = """<!doctype html><meta charset="utf-8">
<style>
  body { margin: 0 }
  .bar { width: 794px; height: 48px; background-color: rgb(20, 40, 60) }
  .bar nav { width: 100%; height: 100% }
  .toolbar { color: rgb(200, 10, 10) }
</style>
<div class="bar" data-testid="bar"><nav aria-label="Top"><a href="/">Home</a></nav></div>
<div class="toolbar" data-testid="toolbar" style="position: relative; left: 500px">Far</div>
<p hidden>On sale</p><p style="visibility: hidden">On sale</p><p>On sale</p>
"""


def test_a_bar_wider_than_the_viewport_is_read_from_the_element_itself(browser: Browser) -> None:
    checks = [
        a("bg", {"test_id": "bar"}, "css", "rgb(20, 40, 60)", name="background-color"),
        a("width", {"test_id": "bar"}, "css", "794px", name="width"),
        a("shown", {"test_id": "bar"}, "visible"),
        a("outside", {"test_id": "toolbar"}, "css", "rgb(200, 10, 10)", name="color"),
        a("outside-shown", {"test_id": "toolbar"}, "visible"),
    ]
    results = run_checks(browser, reader({"index.html": WIDE}), "/", MOBILE, checks)
    assert [(r.id, r.passed, r.observed) for r in results] == [
        ("bg", True, "rgb(20, 40, 60)"),
        ("width", True, "794px"),
        ("shown", True, "visible"),
        ("outside", True, "rgb(200, 10, 10)"),
        ("outside-shown", True, "visible"),
    ]


def test_the_matched_element_is_read_not_an_inner_child_with_the_same_box(
    browser: Browser,
) -> None:
    checks = [
        a("outer", {"test_id": "bar"}, "css", "rgb(20, 40, 60)", name="background-color"),
        a("inner", {"role": "navigation", "name": "Top"}, "css", "x", name="background-color"),
    ]
    results = run_checks(browser, reader({"index.html": WIDE}), "/", MOBILE, checks)
    assert [(r.passed, r.observed) for r in results] == [
        (True, "rgb(20, 40, 60)"),
        (False, "rgba(0, 0, 0, 0)"),  # the nav's own, transparent background
    ]


def test_a_hidden_first_match_followed_by_a_visible_one(browser: Browser) -> None:
    text = {"text": "On sale"}
    checks = [
        a("default", text, "visible"),
        a("any", text, "visible", match="any"),
        a("all", text, "visible", match="all"),
        a("third", text, "visible", match="nth=2"),
        a("second", text, "visible", match="nth=1"),
        a("fourth", text, "visible", match="nth=3"),
        a("none-shown", text, "hidden"),
        a("three", text, "count", 3),
    ]
    results = {
        r.id: r for r in run_checks(browser, reader({"index.html": WIDE}), "/", MOBILE, checks)
    }
    assert {k: (r.passed, r.observed) for k, r in results.items()} == {
        "default": (False, "not visible"),  # the first match, at once: no 10 s wait
        "any": (True, "not visible | not visible | visible"),
        "all": (False, "not visible | not visible | visible"),
        "third": (True, "visible"),
        "second": (False, "not visible"),
        "fourth": (False, "no match nth=3 (only 3)"),
        "none-shown": (False, "1 visible"),
        "three": (True, "3"),
    }
    assert all(r.matches == 3 for r in results.values())
    assert results["default"].ambiguous == (
        '<p> "On sale" at 0,0 0x0',
        '<p> "On sale" at 0,82 390x18',
        '<p> "On sale" at 0,116 390x18',
    )
    assert results["any"].ambiguous == () and results["three"].ambiguous == ()


def test_visibility_is_the_element_s_and_its_ancestors_not_its_opacity(browser: Browser) -> None:
    page = """<!doctype html><meta charset="utf-8">
    <input type="checkbox" aria-label="Done" style="opacity: 0">
    <div style="visibility: hidden"><span>Ghost</span></div>
    <div style="display: none"><span>Gone</span></div>
    <div style="display: contents"><span>Here</span></div>"""
    checks = [
        a("styled-checkbox", {"role": "checkbox", "name": "Done"}, "visible"),
        a("ghost", {"text": "Ghost"}, "hidden"),
        a("gone", {"text": "Gone"}, "hidden"),
        a("contents", {"css": "div[style*=contents]"}, "visible"),
    ]
    results = run_checks(browser, reader({"index.html": page}), "/", MOBILE, checks)
    assert [(r.id, r.passed) for r in results] == [(c.id, True) for c in checks]


SCROLLER = """<!doctype html><meta charset="utf-8">
<style> .spacer { height: 3000px } </style>
<p id="y">0</p><div class="spacer"></div>
<input placeholder="Note"><p><a href="/b.html" title="Next page">next</a></p>
<script>
  addEventListener('scroll', () => { document.getElementById('y').textContent = scrollY; });
</script>"""


@pytest.mark.browser
@needs_chromium
def test_a_workflow_speaks_the_contracts_steps_through_the_one_interpreter(
    browser: Browser,
) -> None:
    """scroll by pixels is an instant scrollBy (as in contract states), goto and reload
    load routes, and title and placeholder locate controls."""
    flow = Workflow.model_validate(
        {
            "id": "walk",
            "steps": [
                {"scroll": {"y": 500}},
                {"id": "scrolled", "assertions": [
                    {"id": "at", "locator": {"css": "#y"}, "expect": "text", "value": "500"}]},
                {"fill": {"placeholder": "Note"}, "value": "hi"},
                {"reload": {}},
                {"id": "reloaded", "assertions": [
                    {"id": "empty", "locator": {"placeholder": "Note"}, "expect": "value",
                     "value": ""}]},
                {"click": {"title": "Next page"}},
                {"wait_for": {"role": "heading", "name": "B"}},
                {"goto": "/"},
                {"id": "back", "assertions": [
                    {"id": "home", "locator": {"css": "#y"}, "expect": "text", "value": "0"}]},
            ],
        }
    )  # fmt: skip
    files = {"index.html": SCROLLER, "b.html": "<!doctype html><h1>B</h1>"}
    run = run_workflow(browser, reader(files), flow, VIEWPORT)
    assert run.failure is None
    for checkpoint in ("scrolled", "reloaded", "back"):
        assert passed(run.rows[key("walk", checkpoint)]) == [True], checkpoint
