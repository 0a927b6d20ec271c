"""record_motion(): a transition stepped through in page time, the same bytes every time."""

from __future__ import annotations

import io
import os
from concurrent.futures import ThreadPoolExecutor

import pytest
from PIL import Image
from playwright.sync_api import Browser

from recon.model.contract import Step
from recon.render import Motion, Viewport, record_motion
from recon.render.browser import chromium_path, open_browser
from recon.render.motion import animated_webp, strip
from tests.conftest import reader

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
    ),
]

VIEWPORT = Viewport("small", 320, 200)

PAGE = """<!doctype html><meta charset="utf-8">
<style>
  @keyframes spin { to { transform: rotate(360deg) } }
  @keyframes appear { from { opacity: 0 } to { opacity: 1 } }
  .spin { position: absolute; left: 10px; top: 10px; width: 40px; height: 40px;
          background: #36c; animation: spin 1s linear infinite }
  .intro { position: absolute; left: 10px; top: 60px; animation: appear .5s both }
  .panel { position: absolute; left: 80px; top: 10px; width: 100px; height: 40px;
           background: #c33; transition: transform .8s linear }
  .panel.open { transform: translateX(120px) }
  #js { position: absolute; left: 0; top: 100px; width: 20px; height: 20px; background: #3a3 }
  button { position: absolute; top: 150px }
</style>
<div class="spin"></div><p class="intro">Welcome</p><div class="panel"></div><div id="js"></div>
<button onclick="document.querySelector('.panel').classList.add('open')">Open</button>
<script>
  let x = 0;
  const move = () => { x += 2; document.getElementById('js').style.left = x + 'px';
                       requestAnimationFrame(move); };
  requestAnimationFrame(move);
</script>"""

OPEN = (Step.model_validate({"click": {"role": "button", "name": "Open"}}),)


def pixel(png: bytes, xy: tuple[int, int]) -> tuple[int, int, int]:
    rgb = Image.open(io.BytesIO(png)).convert("RGB").getpixel(xy)
    assert isinstance(rgb, tuple)
    return (int(rgb[0]), int(rgb[1]), int(rgb[2]))


def record(browser: Browser, **options: object) -> Motion:
    return record_motion(browser, reader({"index.html": PAGE}), "/", VIEWPORT, **options)  # type: ignore[arg-type]


def _in_new_browser(**options: object) -> Motion:
    with open_browser() as other:
        return record(other, **options)


def test_a_transition_started_by_steps_is_the_same_bytes_twice(browser: Browser) -> None:
    first = record(browser, steps=OPEN, frames=6, step_ms=160)
    with ThreadPoolExecutor(1) as pool:  # a second browser (its own thread: sync API)
        second = pool.submit(_in_new_browser, steps=OPEN, frames=6, step_ms=160).result()
    assert first.failure is None
    assert len(first.frames) == 6 and first.step_ms == 160
    assert first.frames == second.frames
    assert first.strip_png == second.strip_png
    assert first.webp == second.webp
    assert len(set(first.frames)) == 6  # every frame shows a different moment


def test_frames_follow_page_time(browser: Browser) -> None:
    motion = record(browser, steps=OPEN, frames=6, step_ms=160)
    # The panel (transition, 120 px in 800 ms) starts at x=80 and moves 24 px per frame.
    red = (204, 51, 51)
    for index, frame in enumerate(motion.frames):
        left = 80 + 24 * index
        assert pixel(frame, (left + 1, 30)) == red, f"frame {index}"
        assert pixel(frame, (left - 2, 30)) != red, f"frame {index}"
    # The requestAnimationFrame box moves 2 px per 16 ms frame of page time.
    green = (51, 170, 51)
    assert pixel(motion.frames[0], (1, 110)) == green
    assert (
        pixel(motion.frames[1], (1, 110)) != green and pixel(motion.frames[1], (21, 110)) == green
    )


def test_page_load_alone_starts_the_transition(browser: Browser) -> None:
    motion = record(browser, frames=3, step_ms=250)
    assert motion.failure is None
    assert len(set(motion.frames)) == 3
    assert motion.frames == record(browser, frames=3, step_ms=250).frames


def test_strip_and_animated_webp(browser: Browser) -> None:
    motion = record(browser, steps=OPEN, frames=4, step_ms=100)
    sheet = Image.open(io.BytesIO(motion.strip_png))
    assert (sheet.format, sheet.size) == ("PNG", (4 * VIEWPORT.width, VIEWPORT.height))
    assert sheet.crop((320, 0, 640, 200)).tobytes() == (
        Image.open(io.BytesIO(motion.frames[1])).convert("RGB").tobytes()
    )
    webp = Image.open(io.BytesIO(motion.webp))
    assert (webp.format, getattr(webp, "n_frames", 1), webp.size) == ("WEBP", 4, (320, 200))
    webp.seek(2)
    third = webp.convert("RGB")  # decoding the frame reads its duration
    assert webp.info["duration"] == 100
    assert third.tobytes() == Image.open(io.BytesIO(motion.frames[2])).convert("RGB").tobytes()
    assert strip(motion.frames) == motion.strip_png
    assert animated_webp(motion.frames, 100) == motion.webp


def test_a_failed_step_is_recorded(browser: Browser) -> None:
    missing = (Step.model_validate({"click": {"text": "Close"}}),)
    motion = record(browser, steps=missing, frames=2, step_ms=100, step_timeout_ms=500)
    assert motion.failure is not None and motion.failure.startswith("steps[0] click {text: Close}")
    assert len(motion.frames) == 2


def test_a_route_the_build_lacks_is_recorded(browser: Browser) -> None:
    motion = record_motion(browser, reader({"index.html": PAGE}), "/gone/", VIEWPORT, frames=2)
    assert motion.failure == "route /gone/: not in the build (HTTP 404)"
    assert len(motion.frames) == 2 and motion.webp.startswith(b"RIFF")
