"""The one locator engine (recon.render.locate): chromium's roles, labels, innermost texts."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import Browser

from recon.model.interaction import Locator
from recon.render import Viewport
from recon.render.locate import Locate
from recon.render.page import load, open_page

pytestmark = pytest.mark.browser

PAGE = """<!doctype html><meta charset="utf-8"><title>On sale</title>
<img src="logo.png" alt="Logo" width="20" height="20">
<label>Quantity <input id="qty" value="2"></label>
<input id="todo" aria-label="New todo" placeholder="What?">
<input id="ph" placeholder="Search">
<button id="buy" title="Purchase">Buy   now</button>
<button id="del" aria-label="Delete">x</button>
<p id="count"><strong>0</strong> items left</p>
<div id="wrap"><span id="inner">Help</span></div>
<div hidden><button id="gone">Hidden</button></div>
<div style="visibility: hidden"><button id="invisible">Invisible</button></div>
<ul><li data-testid="row">a</li><li data-testid="row">b</li></ul>
"""
HOSTILE = """<script>
  document.querySelectorAll = () => [];
  Element.prototype.getAttribute = () => 'forged';
  Node.prototype.compareDocumentPosition = () => 0;
  Object.defineProperty(Node.prototype, 'textContent', {get: () => 'forged'});
</script>"""


def ids(browser: Browser, page: str, **spec: Any) -> list[str]:
    files = {"index.html": page.encode()}
    with open_page(browser, files.get, Viewport("small", 640, 480)) as session:
        load(session, "/", 5000)
        found = Locate(session.cdp, session.world).find(Locator(**spec))
        return [
            str(v) for v in found.read("(el) => el.id || el.localName", list(range(found.count)))
        ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"role": "image"}, ["img"]),  # chromium's role name
        ({"role": "button"}, ["buy", "del"]),  # hidden and invisible buttons are not in the tree
        ({"role": "button", "name": "Buy now"}, ["buy"]),  # whitespace collapsed
        ({"role": "button", "name": "Buy"}, []),  # exact
        ({"role": "textbox", "name": "Search"}, ["ph"]),  # named by its placeholder
        ({"role": "paragraph"}, ["count"]),
        ({"label": "Quantity"}, ["qty"]),  # a wrapping <label>
        ({"label": "New todo"}, ["todo"]),  # aria-label
        ({"label": "Delete"}, ["del"]),
        ({"label": "Search"}, []),  # a placeholder is not a label
        ({"label": "Purchase"}, []),  # nor is a title
        ({"text": "0 items left"}, ["count"]),  # the innermost element with the whole text
        ({"text": "Help"}, ["inner"]),
        ({"text": "On sale"}, []),  # <head> is not page text
        ({"text": "Hidden"}, ["gone"]),  # a hidden copy matches; checks say which they mean
        ({"test_id": "row"}, ["li", "li"]),
        ({"css": "li, img"}, ["img", "li", "li"]),  # document order
        ({"title": "Purchase"}, ["buy"]),  # the title attribute, exactly
        ({"title": "Purch"}, []),
        ({"placeholder": "Search"}, ["ph"]),
        ({"placeholder": "What?"}, ["todo"]),  # whatever names it otherwise
        ({"alt": "Logo"}, ["img"]),
        ({"alt": "logo"}, []),  # case matters, as for names and texts
    ],
)
def test_what_each_locator_matches(
    browser: Browser, spec: dict[str, str], expected: list[str]
) -> None:
    assert ids(browser, PAGE, **spec) == expected


def test_page_script_cannot_change_the_matches(browser: Browser) -> None:
    for spec in ({"role": "button"}, {"label": "Quantity"}, {"text": "Help"}, {"test_id": "row"}):
        assert ids(browser, HOSTILE + PAGE, **spec) == ids(browser, PAGE, **spec), spec


ROLE_TABLE = {  # rows of the role table in recon/grade/selectors.py's docstring
    "img": "image",
    "div": "generic",
    "label": "LabelText",
    "select": "combobox",
    "nav": "navigation",
    "hr": "separator",
    "p": "paragraph",
    "canvas": "Canvas",
    "textarea": "textbox",
    "ul": "list",
}


def test_the_documented_role_names_are_chromium_s(browser: Browser) -> None:
    from recon.grade import selectors

    doc = selectors.__doc__ or ""
    body = "".join(f'<{tag} id="t-{tag}">x</{tag}>' for tag in ROLE_TABLE if tag != "img")
    page = f'<!doctype html><img id="t-img" src="x.png" alt="x" width="9" height="9">{body}'
    for tag, role in ROLE_TABLE.items():
        assert f"``{tag}``" in doc and f"``{role}``" in doc, (tag, role)
        assert f"t-{tag}" in ids(browser, page, role=role), (tag, role)
