"""capture(): deterministic stills of a tiny build, served by interception only."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import Browser

from recon.errors import HarnessError
from recon.render import ORIGIN, Capture, NetworkEvent, Viewport, browser_version
from recon.render.browser import chromium_path, open_browser
from recon.render.capture import capture
from tests.conftest import reader

needs_chromium = pytest.mark.skipif(
    not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
)

VIEWPORT = Viewport("small", 640, 480)

STATIC = {
    "index.html": """<!doctype html><meta charset="utf-8">
<link rel="stylesheet" href="style.css">
<h1>Hello, recon</h1><p class="lead">A tiny build with <a href="/about/">a link</a>.</p>
<ul>"""
    + "".join(f"<li>item {i}</li>" for i in range(40))
    + "</ul>",
    "style.css": "body{font-family:sans-serif;margin:24px} h1{color:#c03;background:#eef}",
}

DYNAMIC = {
    "index.html": """<!doctype html><meta charset="utf-8">
<style>
  @keyframes spin { from { transform: rotate(0deg) } to { transform: rotate(360deg) } }
  @keyframes fade { from { opacity: 0 } to { opacity: 1 } }
  .box { width: 80px; height: 80px; background: #36c; animation: spin 1.3s linear infinite }
  .fade { opacity: 0; animation: fade 2s forwards }
  button { transition: background 3s } button:hover { background: red }
</style>
<h1 id="now"></h1><p id="rand"></p><p id="perf"></p><p id="late">waiting</p><p id="frames"></p>
<div class="box"></div><p class="fade">fading in</p><input autofocus value="caret">
<img src="https://example.com/x.png" alt="external"><button>b</button>
<script>
  document.getElementById('now').textContent = new Date().toISOString() + ' ' + Date.now();
  document.getElementById('rand').textContent = [Math.random(), Math.random()].join(' ');
  document.getElementById('perf').textContent = String(performance.now());
  setTimeout(() => { document.getElementById('late').textContent = 'late ' + Date.now(); }, 250);
  let n = 0;
  const tick = (t) => { n++; document.getElementById('frames').textContent = n + ' ' + t;
                        if (n < 30) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  new WebSocket('wss://example.com/socket');
</script>""",
}


def h1_text(shot: Capture) -> str:
    return next(e["text"] for e in shot.dom if e["tag"] == "h1")


@pytest.mark.browser
@needs_chromium
def test_two_launches_give_identical_full_png() -> None:
    shots = []
    for _ in range(2):
        with open_browser() as b:
            shots.append(capture(b, reader(STATIC), "/", VIEWPORT))
    first, second = shots
    assert first.full_png.startswith(b"\x89PNG")
    assert first.full_png == second.full_png
    assert first.viewport_png == second.viewport_png
    assert len(first.full_png) != len(first.viewport_png)  # the list overflows 480px
    assert NetworkEvent(f"{ORIGIN}/style.css", "served") in first.network
    assert first.timings["settled"] == 1.0


@pytest.mark.browser
@needs_chromium
def test_clock_random_and_animation_are_frozen_and_external_urls_blocked() -> None:
    shots = []
    for _ in range(2):
        with open_browser() as b:
            shots.append(capture(b, reader(DYNAMIC), "/", VIEWPORT))
    first, second = shots
    assert first.full_png == second.full_png
    assert first.viewport_png == second.viewport_png
    assert first.dom == second.dom
    assert h1_text(first) == "2024-01-01T00:00:00.000Z 1704067200000"
    texts = [e["text"] for e in first.dom if e["tag"] == "p"]
    assert texts[:4] == [
        "0.41157995723187923 0.841819531749934",
        "0",
        "late 1704067200250",
        "30 480",
    ]
    assert NetworkEvent("https://example.com/x.png", "blocked") in first.network
    assert NetworkEvent("wss://example.com/socket", "blocked") in first.network
    assert first.network == second.network
    assert not [e for e in first.network if e.outcome == "missing"]


@pytest.mark.browser
@needs_chromium
def test_missing_route_is_logged_not_raised(browser: Browser) -> None:
    shot = capture(browser, reader(STATIC), "/nope/deeper", VIEWPORT)
    assert NetworkEvent(f"{ORIGIN}/nope/deeper", "missing") in shot.network
    assert any(e["text"] == "not found: /nope/deeper" for e in shot.dom)
    assert shot.full_png.startswith(b"\x89PNG")
    assert shot.failure == "route /nope/deeper: not in the build (HTTP 404)"


@pytest.mark.browser
@needs_chromium
def test_directory_route_serves_index(browser: Browser) -> None:
    files = {**STATIC, "about/index.html": "<h1>About</h1>"}
    shot = capture(browser, reader(files), "/about/", VIEWPORT)
    assert NetworkEvent(f"{ORIGIN}/about/", "served") in shot.network
    assert h1_text(shot) == "About"


@pytest.mark.browser
@needs_chromium
def test_dom_snapshot_has_h1_with_sensible_box(browser: Browser) -> None:
    shot = capture(browser, reader(STATIC), "/", VIEWPORT)
    h1 = next(e for e in shot.dom if e["tag"] == "h1")
    assert h1["text"] == "Hello, recon"
    x, y, w, h = h1["box"]
    assert 0 < x < 100 and 0 < y < 100
    assert 200 < w <= VIEWPORT.width and 20 < h < 100
    assert h1["color"] == "rgb(204, 0, 51)"
    assert h1["background"] == "rgb(238, 238, 255)"
    assert set(h1["font"]) == {"family", "size", "weight"}
    assert len(shot.dom) <= 2000


ACCESSIBLE = """<!doctype html><meta charset="utf-8"><title>Names</title>
<style>p::before { content: "> " }</style>
<h1>Welcome <em>home</em></h1>
<div id="host"></div><template><button>In a template</button></template>
<iframe srcdoc="<button>In a frame</button>" width="120" height="40"></iframe>
<button aria-label="Close dialog">x</button>
<label for="email">Email address</label> <input id="email">
<a href="/about/">About us</a>
<img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="A sleeping cat" width="20" height="20">
<p role="note" title="aside">Plain <b>bold</b></p>
<script>
  document.getElementById('host').attachShadow({mode: 'open'}).innerHTML = '<i>shadow</i>';
</script>"""


@pytest.mark.browser
@needs_chromium
def test_dom_snapshot_has_chromiums_computed_roles_and_names(browser: Browser) -> None:
    shot = capture(browser, reader({"index.html": ACCESSIBLE}), "/", VIEWPORT)
    assert shot.failure is None
    found = {e["tag"]: (e["role"], e["name"]) for e in shot.dom}
    assert found["h1"] == ("heading", "Welcome home")  # named by its content
    assert found["button"] == ("button", "Close dialog")  # only aria-label names it
    assert found["input"] == ("textbox", "Email address")  # named by <label for>
    assert found["a"] == ("link", "About us")
    assert found["img"] == ("image", "A sleeping cat")  # chromium's role for <img alt>
    assert found["p"] == ("note", "aside")  # an explicit role; a title names it
    assert found["html"] == found["body"] == found["b"] == ("", "")  # ignored by the tree
    # The shadow tree, the template and the frame's document are not the snapshot's
    # elements: the elements after them still get their own names.
    assert [e["tag"] for e in shot.dom][2:] == [
        "h1",
        "em",
        "div",
        "iframe",
        "button",
        "label",
        "input",
        "a",
        "img",
        "p",
        "b",
    ]


@pytest.mark.browser
@needs_chromium
def test_page_that_never_settles_still_captures(browser: Browser) -> None:
    shot = capture(browser, reader(DYNAMIC), "/", VIEWPORT, settle_ms=1)
    assert shot.timings["settled"] == 0.0
    assert shot.failure is not None and "did not settle within 1 ms" in shot.failure
    assert shot.full_png.startswith(b"\x89PNG")
    assert NetworkEvent(f"{ORIGIN}/", "served") in shot.network


@pytest.mark.browser
@needs_chromium
def test_failing_reader_is_a_harness_error_not_a_page_failure(browser: Browser) -> None:
    def read(path: str) -> bytes | None:
        if path == "style.css":
            raise OSError("store object 3f/3fa9 unreadable")
        return reader(STATIC)(path)

    with pytest.raises(HarnessError, match="store object 3f/3fa9 unreadable"):
        capture(browser, read, "/", VIEWPORT)


@pytest.mark.browser
@needs_chromium
def test_console_collects_errors_and_page_errors(browser: Browser) -> None:
    files = {"index.html": "<script>console.error('bad thing'); undefinedCall();</script>"}
    shot = capture(browser, reader(files), "/", VIEWPORT)
    assert "bad thing" in shot.console
    assert any("undefinedCall" in line for line in shot.console)


@pytest.mark.browser
@needs_chromium
def test_browser_version_needs_no_launch() -> None:
    assert browser_version().startswith("Chromium ")
