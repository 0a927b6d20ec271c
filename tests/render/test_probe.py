"""run_checks(): sealed checks resolved by playwright locators, immune to page overrides."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser

from recon.errors import ConfigError
from recon.render import Check, CheckResult, Reader, Viewport, run_checks
from recon.render.browser import chromium_path, open_browser

needs_chromium = pytest.mark.skipif(
    not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
)

VIEWPORT = Viewport("small", 640, 480)

PAGE = """<!doctype html><meta charset="utf-8">
<h1>Shop</h1>
<nav aria-label="main"><a href="/">Home</a><a href="/cart/">Cart</a></nav>
<ul><li class="item">apple</li><li class="item">pear</li><li class="item">plum</li></ul>
<button data-testid="buy">Buy now</button>
<p hidden>secret</p>
"""

HOSTILE = """<script>
  document.querySelector = () => null;
  document.querySelectorAll = () => [];
  Element.prototype.querySelector = () => null;
  Element.prototype.getBoundingClientRect = () => new DOMRect(0, 0, 0, 0);
  Element.prototype.getClientRects = () => [];
</script>"""

CHECKS = [
    Check("heading", {"role": "heading", "name": "Shop"}, "visible"),
    Check("nav", {"role": "navigation", "name": "main"}, "visible"),
    Check("text", {"text": "Buy now"}, "visible"),
    Check("buy", {"test_id": "buy"}, "text", "Buy"),
    Check("items", {"css": "li.item"}, "count", 3),
    Check("links", {"role": "link"}, "count", 2),
    Check("absent", {"text": "Checkout"}, "visible"),
    Check("hidden", {"text": "secret"}, "visible"),
    Check("too-many", {"css": "li.item"}, "count", 4),
    Check("wrong-text", {"test_id": "buy"}, "text", "Sell"),
    Check("bad-css", {"css": "li[["}, "count", 1),
]
EXPECTED = {
    "heading": True,
    "nav": True,
    "text": True,
    "buy": True,
    "items": True,
    "links": True,
    "absent": False,
    "hidden": False,
    "too-many": False,
    "wrong-text": False,
    "bad-css": False,
}


def reader(files: dict[str, str]) -> Reader:
    return lambda path: files[path].encode() if path in files else None


@pytest.fixture
def browser() -> Iterator[Browser]:
    with open_browser() as b:
        yield b


@pytest.mark.browser
@needs_chromium
def test_checks_pass_and_fail_as_expected(browser: Browser) -> None:
    results = run_checks(browser, reader({"index.html": PAGE}), "/", VIEWPORT, CHECKS)
    assert {r.id: r.passed for r in results} == EXPECTED
    observed = {r.id: r.observed for r in results}
    assert observed["items"] == "3"
    assert observed["too-many"] == "3"
    assert observed["wrong-text"] == "Buy now"
    assert observed["absent"] == "timeout after 1000 ms"
    assert observed["bad-css"].startswith("error: ")


@pytest.mark.browser
@needs_chromium
def test_page_overriding_dom_apis_does_not_change_results(browser: Browser) -> None:
    plain = run_checks(browser, reader({"index.html": PAGE}), "/", VIEWPORT, CHECKS)
    hostile_build = reader({"index.html": HOSTILE + PAGE})
    hostile = run_checks(browser, hostile_build, "/", VIEWPORT, CHECKS)
    assert hostile == plain


@pytest.mark.browser
@needs_chromium
def test_missing_route_fails_checks_without_raising(browser: Browser) -> None:
    results = run_checks(browser, reader({}), "/", VIEWPORT, CHECKS[:1], timeout_ms=200)
    assert results == [CheckResult("heading", False, "timeout after 200 ms")]


@pytest.mark.parametrize(
    ("locator", "expect", "value"),
    [
        ({"xpath": "//h1"}, "visible", None),
        ({"role": "heading", "text": "x"}, "visible", None),
        ({"css": "h1"}, "attribute", "x"),
        ({"css": "h1"}, "count", "3"),
        ({"css": "h1"}, "text", None),
    ],
)
def test_malformed_check_is_a_config_error(
    locator: dict[str, str], expect: str, value: object
) -> None:
    with pytest.raises(ConfigError, match="check 'bad'"):
        Check("bad", locator, expect, value)  # type: ignore[arg-type]
