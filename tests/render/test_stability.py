"""Captures of a JS-heavy page settle to the same bytes in every process; a page that never
stops moving is recorded as unstable, with its pixel difference, not captured as if still."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Browser

from recon.render import Viewport
from recon.render.browser import FONT_DIR, chromium_path
from recon.render.capture import capture
from recon.render.page import load, open_page
from recon.render.stills import TRIES, differing_pixels, retire
from tests.conftest import reader

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
    ),
]

VIEWPORT = Viewport("desktop", 800, 600)

# What a documentation theme does: a tab underline placed by script once the brand font has
# swapped in (its width depends on the font), moved by a CSS transition, and marked
# "settled" on its transitionend; cards revealed by an IntersectionObserver after a timer,
# which also loads a second font and swaps it in.
SETTLING = """<!doctype html><meta charset="utf-8">
<style>
  @font-face { font-family: Brand; src: url(/fonts/brand.ttf) format('truetype');
               font-display: swap }
  body { margin: 0; font: 16px sans-serif }
  nav { position: relative; display: flex; background: #f4f4f8; font: 20px Brand, sans-serif }
  nav a { padding: 12px 18px; color: #223 }
  .underline { position: absolute; bottom: 0; left: 0; width: 0; height: 3px; background: #06c;
               transition: left .25s ease, width .25s ease }
  .underline.settled { height: 5px; background: #c30 }
  .card { margin: 24px; padding: 16px; background: #dde; opacity: .15; transition: opacity .4s }
  .card.seen { opacity: 1; background: #cfe }
  .spacer { height: 500px }
</style>
<nav><a>Overview</a><a class="active">Reference guide</a><a>Changelog</a>
  <span class="underline"></span></nav>
<section class="card" id="first">Above the fold, seen at once</section>
<div class="spacer"></div>
<section class="card" id="second">Below the fold</section>
<script>
  const nav = document.querySelector('nav'), line = nav.querySelector('.underline');
  const place = () => {
    const active = nav.querySelector('.active');
    line.style.left = active.offsetLeft + 'px';
    line.style.width = active.offsetWidth + 'px';
  };
  line.addEventListener('transitionend', () => line.classList.add('settled'));
  new ResizeObserver(() => requestAnimationFrame(place)).observe(nav.querySelector('.active'));
  document.fonts.ready.then(() => setTimeout(place, 30));
  const io = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      setTimeout(() => entry.target.classList.add('seen'), 120);
      new FontFace('Late', 'url(/fonts/late.ttf)').load().then((face) => {
        document.fonts.add(face);
        entry.target.style.fontFamily = 'Late, sans-serif';
      });
    }
  });
  document.querySelectorAll('.card').forEach((card) => io.observe(card));
</script>"""


def settling_files() -> dict[str, bytes]:
    return {
        "index.html": SETTLING.encode(),
        "fonts/brand.ttf": (Path(FONT_DIR) / "LiberationSerif-Regular.ttf").read_bytes(),
        "fonts/late.ttf": (Path(FONT_DIR) / "LiberationMono-Regular.ttf").read_bytes(),
    }


# Run in a fresh interpreter: its own playwright driver, its own chromium.
CAPTURE_ONCE = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from test_stability import VIEWPORT, settling_files
from recon.render import open_browser
from recon.render.capture import capture

files, out = settling_files(), Path(sys.argv[2])
with open_browser() as browser:
    shot = capture(browser, files.get, "/", VIEWPORT)
(out / "full.png").write_bytes(shot.full_png)
(out / "viewport.png").write_bytes(shot.viewport_png)
(out / "dom.json").write_text(json.dumps(shot.dom, sort_keys=True))
(out / "status.json").write_text(json.dumps([shot.failure, shot.status]))
"""


def element(dom: list[dict[str, object]], tag: str, text: str = "") -> dict[str, object]:
    return next(e for e in dom if e["tag"] == tag and (not text or e["text"] == text))


def test_a_settling_page_gives_the_same_bytes_in_ten_processes(
    tmp_path: Path, in_a_new_process: Callable[..., dict[str, bytes]]
) -> None:
    here = str(Path(__file__).resolve().parent)
    runs = [in_a_new_process(CAPTURE_ONCE, tmp_path / f"run{i}", here) for i in range(10)]
    first = runs[0]
    assert json.loads(first["status.json"]) == [None, "stable"]
    differing = [i for i, run in enumerate(runs) if run != first]
    assert differing == [], f"runs {differing} differ from run 0"

    # ... and the bytes are those of the settled page, not of a frame on the way.
    dom = json.loads(first["dom.json"])
    active, line = element(dom, "a", "Reference guide"), element(dom, "span")
    assert line["background"] == "rgb(204, 51, 0)", "transitionend ran: the underline settled"
    assert line["box"] == [  # under the tab, as wide as the tab in the swapped-in font
        active["box"][0],  # type: ignore[index]
        active["box"][1] + active["box"][3] - 5,  # type: ignore[index]
        active["box"][2],  # type: ignore[index]
        5,
    ]
    assert element(dom, "a", "Overview")["font"]["family"] == "Brand, sans-serif"  # type: ignore[index]
    seen = element(dom, "section", "Above the fold, seen at once")
    assert seen["background"] == "rgb(204, 255, 238)", "the observer's timer ran"
    assert seen["font"]["family"] == "Late, sans-serif"  # type: ignore[index]
    below = element(dom, "section", "Below the fold")
    assert below["background"] == "rgb(221, 221, 238)", "below the fold: never intersected"


def page(html: str) -> Callable[[str], bytes | None]:
    return reader({"index.html": html})


FOREVER = {
    # Script animation: a box moved every frame, for ever, by requestAnimationFrame.
    "frames": """<!doctype html><div id="box" style="position:absolute;top:40px;width:60px;
height:60px;background:#36c"></div><script>
const box = document.getElementById('box');
const move = (t) => { box.style.left = (t / 4) % 500 + 'px'; requestAnimationFrame(move); };
requestAnimationFrame(move);</script>""",
    # A canvas repainted by a timer: no DOM mutation, no layout change, only pixels.
    "canvas": """<!doctype html><canvas id="c" width="300" height="100"></canvas><script>
const g = document.getElementById('c').getContext('2d'); let n = 0;
const paint = () => { g.fillStyle = `hsl(${n++ * 7 % 360} 70% 50%)`; g.fillRect(0, 0, 300, 100); };
setInterval(paint, 8);
</script>""",
}


@pytest.mark.parametrize("name", sorted(FOREVER))
def test_a_page_that_animates_for_ever_is_recorded_unstable(browser: Browser, name: str) -> None:
    shot = capture(browser, page(FOREVER[name]), "/", VIEWPORT)
    assert shot.status == "unstable"
    assert not shot.stability.stable and shot.stability.pairs == TRIES
    assert shot.stability.differing_pixels > 0
    assert shot.stability.size == (800, 600)
    assert "pixels differed between stills a frame apart" in shot.stability.describe()
    assert shot.failure is None  # the page did load and settle its network: only its pixels move


def test_a_still_page_is_proven_stable_with_one_pair(browser: Browser) -> None:
    shot = capture(browser, page("<!doctype html><h1>Still</h1>"), "/", VIEWPORT)
    assert (shot.status, shot.stability.pairs, shot.stability.differing_pixels) == ("stable", 1, 0)


def test_a_css_animation_that_runs_for_ever_is_collapsed_for_stills(browser: Browser) -> None:
    """Stills collapse CSS animations (one 0 s iteration): an infinite spinner is still."""
    spinner = """<!doctype html><style>@keyframes spin { to { transform: rotate(360deg) } }
    div { width: 50px; height: 50px; background: #36c; animation: spin 1s linear infinite }
    </style><div></div>"""
    assert capture(browser, page(spinner), "/", VIEWPORT).status == "stable"


# A headline faded in by a CSS animation that fills its end state, at a fractional
# position, over a dark hero (a real landing page's, issue 28's page 100); ``{}`` is where
# the animation goes. Its ``::after`` mark fades in too: a pseudo-element's animation can't
# be committed to a style, so it is left running, finished, as it is.
FADED = """<!doctype html><style>
  @keyframes fadeIn { from { opacity: 0 } to { opacity: 1 } }
  @keyframes mark { from { background: #fff } to { background: #c30 } }
  body { margin: 0; background: #000 }
  h1 { position: absolute; top: 40.4px; left: 30.3px; margin: 0; padding: 8.3px;
       font: 37.7px sans-serif; color: #fff; background: #0a0a0a {} }
  h1 span { background: #e8571c }
  h1::after { content: ""; display: inline-block; width: 40px; height: 40px;
              animation: mark .5s forwards }
</style><h1><span>Command</span> your attack surface</h1>"""


def test_a_finished_animation_is_retired_so_the_page_stills_as_if_it_never_ran(
    browser: Browser,
) -> None:
    """Stills retire finished animations (their end state committed to the element's style,
    the animation cancelled): chromium then paints the page as one that never animated. A
    filling animation left in place let it paint the headline on a layer of its own or not,
    decided by timing: its bottom edge came out a row different from capture to capture."""
    animated = FADED.replace("{}", "; animation: fadeIn .9s forwards", 1)
    with open_page(browser, page(animated), VIEWPORT) as session:
        load(session, "/", 5000)
        assert session.world.evaluate("document.getAnimations().length") == 2
        assert retire(session) == 1
        left = session.world.evaluate(
            "document.getAnimations().map((a) => [a.animationName, a.playState])"
        )
        assert left == [["mark", "finished"]]  # the pseudo-element's, left as it was
        assert session.world.evaluate(
            "[getComputedStyle(document.querySelector('h1')).opacity,"
            " document.querySelector('h1').style.opacity]"
        ) == ["1", "1"]  # the end state, now the element's own style
    shot = capture(browser, page(animated), "/", VIEWPORT)
    never_ran = capture(browser, page(FADED.replace("{}", "", 1)), "/", VIEWPORT)
    assert shot.full_png == never_ran.full_png
    x, y, w, h = (int(v) for v in element(shot.dom, "h1")["box"])  # type: ignore[attr-defined]
    still = Image.open(io.BytesIO(shot.full_png)).convert("RGB")
    assert still.getpixel((x + w - 30, y + h // 2)) == (204, 51, 0)  # the mark's end colour


VIDEO = "<video{} width=320 height=180><source src=missing.mp4></video>"


def test_native_media_controls_are_not_drawn(browser: Browser) -> None:
    """Chromium draws a ``<video controls>``'s bar on real time (a fade, a loading
    spinner): stills leave it out, so such a page captures as the same page without it."""
    shots = {
        flag: capture(browser, page(VIDEO.format(flag)), "/", VIEWPORT).full_png
        for flag in ("", " controls")
    }
    assert shots[" controls"] == shots[""]


def test_the_stills_stylesheet_reaches_a_sandboxed_frame(browser: Browser) -> None:
    """A video in a frame without script gets chromium's controls too, and a sandboxed
    ``<iframe srcdoc>`` is a frame chromium may render in a process of its own: the stills
    stylesheet reaches it, so the page captures as the same frame with script allowed."""
    inside = "<body style=background:#234>" + VIDEO.format("")
    frame = "<iframe{} width=400 height=240 srcdoc='" + inside + "'></iframe>"
    shots = {
        attr: capture(browser, page(frame.format(attr)), "/", VIEWPORT).full_png
        for attr in ("", " sandbox")
    }
    assert shots[" sandbox"] == shots[""]
    blank = capture(browser, page("<iframe width=400 height=240></iframe>"), "/", VIEWPORT)
    assert shots[""] != blank.full_png  # the frame's document is drawn


def png(size: tuple[int, int], dots: list[tuple[int, int]]) -> bytes:
    image = Image.new("RGB", size, "white")
    for dot in dots:
        image.putpixel(dot, (0, 0, 0))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def test_differing_pixels_counts_changed_pixels_over_the_larger_canvas() -> None:
    assert differing_pixels(png((4, 3), []), png((4, 3), [])) == (0, (4, 3))
    assert differing_pixels(png((4, 3), [(0, 0)]), png((4, 3), [(1, 1), (2, 2)])) == (3, (4, 3))
    faint = Image.new("RGB", (2, 2), "white")
    faint.putpixel((1, 0), (255, 255, 254))  # one step in one channel still counts
    out = io.BytesIO()
    faint.save(out, format="PNG")
    assert differing_pixels(png((2, 2), []), out.getvalue()) == (1, (2, 2))
    # A taller second still: its extra rows count against white.
    assert differing_pixels(png((4, 3), []), png((4, 5), [(0, 4)])) == (1, (4, 5))
