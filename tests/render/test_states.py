"""capture(..., steps=...): contract states reached by locator steps, failures recorded."""

from __future__ import annotations

import os
from typing import Any

import pytest
from playwright.sync_api import Browser

from recon.model.contract import Step
from recon.render import Capture, Viewport
from recon.render.browser import chromium_path
from recon.render.capture import capture
from tests.conftest import reader

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
    ),
]

VIEWPORT = Viewport("small", 640, 480)

APP = """<!doctype html><meta charset="utf-8">
<style>
  #menu { display: none } body.open #menu { display: block }
  .tip { visibility: hidden } .has-tip:hover .tip { visibility: visible }
  .spacer { height: 3000px }
</style>
<button onclick="setTimeout(() => document.body.classList.add('open'), 300)">Menu</button>
<nav id="menu" aria-label="site"><a href="/">Home</a></nav>
<label>Search <input id="q" data-testid="search-box"></label>
<p id="echo"></p>
<span class="has-tip"><span>Help</span> <span class="tip">Tip shown</span></span>
<div class="spacer"></div><h2 id="footer">Footer</h2>
<script>
  const q = document.getElementById('q');
  q.addEventListener('keydown', (e) => {
    if (e.key === 'Enter')
      fetch('/data.json').then((r) => r.json()).then((d) => {
        document.getElementById('echo').textContent = q.value + ' ' + d.answer;
      });
  });
</script>"""
FILES = {"index.html": APP, "data.json": '{"answer": 42}'}


def steps(*raw: dict[str, Any]) -> tuple[Step, ...]:
    return tuple(Step.model_validate(s) for s in raw)


def text_of(shot: Capture, tag: str) -> list[str]:
    return [e["text"] for e in shot.dom if e["tag"] == tag]


def test_click_waits_out_page_timers_and_the_state_shows(browser: Browser) -> None:
    plain = capture(browser, reader(FILES), "/", VIEWPORT)
    opened = capture(
        browser,
        reader(FILES),
        "/",
        VIEWPORT,
        steps=steps({"click": {"role": "button", "name": "Menu"}}),
    )
    assert plain.failure is None and opened.failure is None
    assert "Home" not in text_of(plain, "a")
    assert "Home" in text_of(opened, "a")  # shown 300 ms of page time after the click
    assert opened.full_png != plain.full_png


def test_fill_press_and_fetch_settle_before_the_stills(browser: Browser) -> None:
    shot = capture(
        browser,
        reader(FILES),
        "/",
        VIEWPORT,
        steps=steps(
            {"fill": {"label": "Search"}, "value": "shoes"},
            {"press": {"test_id": "search-box"}, "key": "Enter"},
        ),
    )
    assert shot.failure is None
    assert "shoes 42" in text_of(shot, "p")


def test_hover_scroll_and_wait_for(browser: Browser) -> None:
    hovered = capture(
        browser, reader(FILES), "/", VIEWPORT, steps=steps({"hover": {"text": "Help"}})
    )
    assert hovered.failure is None
    assert "Tip shown" in text_of(hovered, "span")  # visible only while hovered
    scrolled = [
        capture(browser, reader(FILES), "/", VIEWPORT, steps=steps(step))
        for step in ({"scroll": {"y": 3000}}, {"scroll": {"role": "heading", "name": "Footer"}})
    ]
    plain = capture(browser, reader(FILES), "/", VIEWPORT)
    for shot in scrolled:
        assert shot.failure is None
        assert shot.viewport_png != plain.viewport_png  # the viewport moved down
        assert shot.full_png == plain.full_png  # the page did not change
    waited = capture(
        browser, reader(FILES), "/", VIEWPORT, steps=steps({"wait_for": {"text": "Help"}})
    )
    assert waited.failure is None


def test_states_render_identically_twice(browser: Browser) -> None:
    path = steps(
        {"click": {"role": "button", "name": "Menu"}},
        {"fill": {"test_id": "search-box"}, "value": "hats"},
        {"press": None, "key": "Enter"},
    )
    first, second = (capture(browser, reader(FILES), "/", VIEWPORT, steps=path) for _ in "ab")
    assert first.failure is None
    assert first.full_png == second.full_png
    assert first.viewport_png == second.viewport_png
    assert first.dom == second.dom
    assert "hats 42" in text_of(first, "p")


def test_a_step_whose_element_never_appears_is_recorded_not_raised(browser: Browser) -> None:
    shot = capture(
        browser,
        reader(FILES),
        "/",
        VIEWPORT,
        steps=steps(
            {"click": {"role": "button", "name": "Menu"}},
            {"click": {"role": "button", "name": "Checkout"}},
            {"hover": {"text": "Help"}},
        ),
        step_timeout_ms=1000,
    )
    assert shot.failure is not None
    assert shot.failure.startswith(
        "steps[1] click {role: button, name: Checkout}: no matching element"
    )
    assert "Home" in text_of(shot, "a")  # the first step happened; the stills were taken
    assert shot.full_png.startswith(b"\x89PNG")


def test_an_ambiguous_locator_fails_the_step(browser: Browser) -> None:
    files = {"index.html": "<button>Buy</button><button>Buy</button>"}
    shot = capture(browser, reader(files), "/", VIEWPORT, steps=steps({"click": {"text": "Buy"}}))
    assert shot.failure is not None and "strict mode violation" in shot.failure


def test_a_route_the_build_lacks_is_a_recorded_failure(browser: Browser) -> None:
    shot = capture(
        browser,
        reader(FILES),
        "/shop/",
        VIEWPORT,
        steps=steps({"click": {"role": "button", "name": "Menu"}}),
    )
    assert shot.failure == "route /shop/: not in the build (HTTP 404)"  # steps skipped
    assert shot.full_png.startswith(b"\x89PNG")


TITLED = """<!doctype html><meta charset="utf-8">
<style> input[type=radio] { width: 0; height: 0; margin: 0 } #said:empty { display: none } </style>
<label title="Gift wrap"><input type="radio" name="wrap" value="gift"> 🎁</label>
<input placeholder="Your name">
<img alt="Send" width="40" height="20" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
<p id="said"></p>
<script>
  document.querySelector('img').addEventListener('click', () => {
    const gift = document.querySelector('input[type=radio]').checked;
    document.getElementById('said').textContent =
      document.querySelector('[placeholder]').value + (gift ? ' wraps a gift' : ' sends');
  });
</script>"""


def test_title_placeholder_and_alt_reach_controls_no_role_or_label_names(
    browser: Browser,
) -> None:
    """A label known only by its title (its radio is 0×0), an input by its placeholder,
    an image by its alt text: each is one public locator, no ArrowDown needed."""
    shot = capture(
        browser,
        reader({"index.html": TITLED}),
        "/",
        VIEWPORT,
        steps=steps(
            {"click": {"title": "Gift wrap"}},
            {"fill": {"placeholder": "Your name"}, "value": "Ada"},
            {"click": {"alt": "Send"}},
            {"wait_for": {"text": "Ada wraps a gift"}},
        ),
    )
    assert shot.failure is None
    assert "Ada wraps a gift" in text_of(shot, "p")
