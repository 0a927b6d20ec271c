"""Hostile pages: deterministic anyway, can't fake the DOM snapshot, can't stall a capture,
can't cost a later capture its browser (a 10^6 px page, a 4 GB allocation)."""

from __future__ import annotations

import importlib
import os
import time
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from recon.model.contract import Step
from recon.render import ORIGIN, NetworkEvent, Viewport
from recon.render.browser import FONT_DIR, chromium_path, open_browser
from recon.render.capture import capture
from recon.render.page import load, open_page
from recon.render.session import SCRIPT_LIMIT_S
from recon.render.snapshot import _DOM_JS
from recon.render.stills import MAX_HEIGHT, MAX_PIXELS, MAX_WIDTH, png_size
from tests.conftest import reader

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
    ),
]

VIEWPORT = Viewport("small", 640, 480)
BRAND_FONT = (Path(FONT_DIR) / "LiberationMono-Regular.ttf").read_bytes()

HOSTILE = """<!doctype html><meta charset="utf-8">
<style>
  @font-face { font-family: Brand; src: url(/fonts/brand.ttf) format('truetype') }
  @font-face { font-family: Remote; src: url(https://fonts.example.com/remote.woff2) }
  h1 { font-family: Brand, serif } h2 { font-family: Remote, sans-serif }
  @keyframes pulse { from { opacity: .2 } to { opacity: 1 } }
  .pulse { animation: pulse .7s ease-in-out infinite alternate; background: #c33 }
</style>
<h1 id="now"></h1><h2>Remote font falls back</h2><p id="rand"></p>
<div class="pulse">pulsing</div>
<script>
  document.getElementById('now').textContent = 'Now ' + Date.now();
  document.getElementById('rand').textContent = 'Random ' + Math.random();
  fetch('https://tracker.example.net/beacon?t=' + Date.now()).catch(() => {});
</script>"""

PLAIN = """<!doctype html><meta charset="utf-8">
<style>h1 { color: #c03 } p { font: 18px monospace }</style>
<h1 aria-label="title">Hello</h1><p>Some <b>bold</b> words</p><ul><li>one</li><li>two</li></ul>"""

# Overrides, in the page's own world, of everything the snapshot script calls.
OVERRIDES = """<script>
  document.querySelectorAll = () => [];
  Document.prototype.querySelectorAll = () => [];
  Element.prototype.getBoundingClientRect = () => new DOMRect(1, 2, 3, 4);
  window.getComputedStyle = () => ({color: 'fake', backgroundColor: 'fake', fontFamily: 'fake'});
  Element.prototype.getAttribute = () => 'fake';
  Object.defineProperty(Node.prototype, 'childNodes', {get: () => []});
  Object.defineProperty(Element.prototype, 'tagName', {get: () => 'FAKE'});
  window.fetch = () => Promise.reject(new Error('no'));
</script>"""


def test_hostile_page_renders_identically_in_two_browsers() -> None:
    files: dict[str, str | bytes] = {"index.html": HOSTILE, "fonts/brand.ttf": BRAND_FONT}
    shots = []
    for _ in range(2):
        with open_browser() as b:
            shots.append(capture(b, reader(files), "/", VIEWPORT))
    first, second = shots
    assert (first.full_png, first.viewport_png) == (second.full_png, second.viewport_png)
    assert first.dom == second.dom and first.network == second.network
    assert first.failure is None
    assert NetworkEvent(f"{ORIGIN}/fonts/brand.ttf", "served") in first.network
    assert NetworkEvent("https://fonts.example.com/remote.woff2", "blocked") in first.network
    blocked = [e.url for e in first.network if e.outcome == "blocked"]
    assert "https://tracker.example.net/beacon?t=1704067200000" in blocked
    h1 = next(e for e in first.dom if e["tag"] == "h1")
    assert h1["text"] == "Now 1704067200000"
    assert h1["font"]["family"] == "Brand, serif"


def test_page_script_cannot_change_the_dom_snapshot(browser: Browser) -> None:
    plain = capture(browser, reader({"index.html": PLAIN}), "/", VIEWPORT)
    hostile_page = PLAIN.replace("<style>", OVERRIDES + "<style>")  # after the doctype
    hostile = capture(browser, reader({"index.html": hostile_page}), "/", VIEWPORT)
    assert plain.failure is None and hostile.failure is None
    assert [e["tag"] for e in plain.dom] == ["html", "body", "h1", "p", "b", "ul", "li", "li"]
    assert hostile.dom == plain.dom
    h1 = plain.dom[2]
    assert (h1["name"], h1["text"], h1["color"]) == ("title", "Hello", "rgb(204, 0, 51)")
    # The same script run in the page's own world is fooled: the overrides are real.
    with open_page(browser, reader({"index.html": hostile_page}), VIEWPORT) as session:
        load(session, "/", 5000)
        assert session.page.evaluate(_DOM_JS, 100) == []


NEVER_SETTLES = {
    "inline loop": "<p>before</p><script>while (true) {}</script><p>after</p>",
    "load handler loop": "<p>x</p><script>addEventListener('load', () => { for (;;) {} })</script>",
    "timer loop": "<p>x</p><script>setTimeout(() => { for (;;) {} }, 100)</script>",
    # In a frame: the stills stylesheet is added to every frame, each addition guarded too.
    "frame timer loop": '<p>x</p><iframe srcdoc="<script>setTimeout(() => { for (;;) {} }, '
    '100)</script>"></iframe>',
    "endless fetches": "<p>x</p><script>(async () => { for (let i = 0; ; i++) "
    "await fetch('/poll?' + (i % 3)) })()</script>",
    "endless frames": "<p>x</p><script>const f = () => { document.title = Math.random(); "
    "requestAnimationFrame(f) }; requestAnimationFrame(f)</script>",
}


@pytest.mark.parametrize("name", sorted(NEVER_SETTLES))
def test_a_page_that_never_settles_is_bounded_and_recorded(browser: Browser, name: str) -> None:
    files: dict[str, str | bytes] = {"index.html": NEVER_SETTLES[name], "poll": "{}"}
    # The bound is the settle budget, recorded in the failure (no wall-clock assertion: a
    # busy machine stretches every phase). The endless frames settle (the paused clock runs
    # no frames), so they get a budget no loaded machine exhausts: settling ends when still.
    budget = 60_000 if name == "endless frames" else 1500
    shot = capture(browser, reader(files), "/", VIEWPORT, settle_ms=budget)
    assert shot.full_png.startswith(b"\x89PNG") and shot.viewport_png.startswith(b"\x89PNG")
    if name == "endless frames":
        assert shot.failure is None
        return
    assert shot.failure is not None and "did not settle within 1500 ms" in shot.failure
    assert shot.timings["settled"] == 0.0
    if "loop" in name:
        assert "page script ran past" in shot.failure


def test_a_slow_dom_snapshot_is_not_blamed_on_the_page(
    browser: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot is the harness's own work: on a loaded machine it takes seconds (a
    6,000-element page took over 3 s at load 25), and the page-script guard must not
    terminate it and record a page fault. The slowness is simulated: a delay longer than
    the page-script limit before the real snapshot."""
    capture_module = importlib.import_module("recon.render.capture")  # not the function
    real = capture_module.snapshot

    def slow(*args: object, **kwargs: object) -> object:
        time.sleep(SCRIPT_LIMIT_S + 1)
        return real(*args, **kwargs)

    monkeypatch.setattr(capture_module, "snapshot", slow)
    shot = capture(browser, reader({"index.html": "<p>static</p>"}), "/", VIEWPORT)
    assert shot.failure is None
    assert any(e["text"] == "static" for e in shot.dom)


def test_a_step_whose_handler_never_returns_is_bounded_and_recorded(browser: Browser) -> None:
    files: dict[str, str | bytes] = {
        "index.html": "<button onclick='for (;;) {}'>Go</button><p>still here</p>"
    }
    go = Step.model_validate({"click": {"role": "button", "name": "Go"}})
    shot = capture(browser, reader(files), "/", VIEWPORT, steps=[go, go], step_timeout_ms=1000)
    assert shot.failure is not None
    assert shot.failure.startswith("steps[")
    assert "page script ran past" in shot.failure
    assert any(e["text"] == "still here" for e in shot.dom)  # the page is usable again


# --- pages that would cost other pages their browser (issue 27) -------------------------

TALL = 1_000_000
HUGE = {
    # Stripes: chromium rasterises every tile of a 10^6 px page (uncapped, it crashed).
    "tall": f"<style>body {{ margin: 0 }}</style><div style='height: {TALL}px; background: "
    "repeating-linear-gradient(#c33 0 10px, #33c 10px 20px)'>tall</div>",
    "wide": f"<style>body {{ margin: 0 }}</style><div style='width: {TALL}px; height: 200px; "
    "background: repeating-linear-gradient(90deg, #c33 0 10px, #33c 10px 20px)'>wide</div>",
}


@pytest.mark.parametrize("name", sorted(HUGE))
def test_a_huge_page_is_clipped_recorded_and_leaves_the_browser_working(
    browser: Browser, name: str
) -> None:
    files: dict[str, str | bytes] = {"index.html": HUGE[name], "plain.html": PLAIN}
    shot = capture(browser, reader(files), "/", VIEWPORT)
    width, height = png_size(shot.full_png)
    assert (width, height) == (
        (VIEWPORT.width, MAX_HEIGHT) if name == "tall" else (MAX_WIDTH, VIEWPORT.height)
    )
    page = f"640x{TALL}" if name == "tall" else f"{TALL}x480"
    assert shot.failure == (
        f"full-page still clipped to {width}x{height} px of the page's {page} px "
        f"(at most {MAX_WIDTH} px wide, {MAX_HEIGHT} px tall, {MAX_PIXELS} pixels)"
    )
    assert shot.stability.stable and shot.timings["settled"] == 1.0
    assert browser.is_connected()
    after = capture(browser, reader(files), "/plain.html", VIEWPORT)
    assert after.failure is None and after.dom[2]["text"] == "Hello"


ALLOCATE_4GB = """<p id="r">start</p><script>
  try {
    const a = new Uint8Array(4 * 1024 ** 3); a.fill(1);
    document.getElementById('r').textContent = 'allocated ' + a.length;
  } catch (e) { document.getElementById('r').textContent = 'refused: ' + e.name }
</script>"""


def test_a_4gb_allocation_is_refused_and_the_next_capture_is_fine(browser: Browser) -> None:
    files: dict[str, str | bytes] = {"index.html": ALLOCATE_4GB, "plain.html": PLAIN}
    shot = capture(browser, reader(files), "/", VIEWPORT)
    assert any(e["text"] == "refused: RangeError" for e in shot.dom), shot.dom
    after = capture(browser, reader(files), "/plain.html", VIEWPORT)
    assert after.failure is None and after.dom[2]["text"] == "Hello"
