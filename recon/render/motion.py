"""Motion evidence: a transition recorded frame by frame in page time.

The page is loaded with the clock paused and the document timeline frozen (CSS
animations and transitions do not move by themselves); a state's steps start the
transition, or page load does when there are none. Then, ``frames`` times: move every
animation to its time since it was first seen, take a viewport screenshot (animations
*not* disabled), and advance page time by ``step_ms`` (timers and animation frames run).
Every frame is a function of the build and the parameters alone: recording twice gives
the same bytes. The frames come back with a horizontal strip PNG and an animated WebP.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image
from playwright.sync_api import Browser
from playwright.sync_api import Error as PlaywrightError

from recon.model.interaction import Step
from recon.render.page import (
    Reader,
    Session,
    Viewport,
    advance_clock,
    blank_png,
    first_line,
    guard,
    load,
    open_page,
)
from recon.render.steps import run_steps

FRAMES = 8
STEP_MS = 100
FRAME_TIMEOUT_MS = 30_000
STEP_TIMEOUT_MS = 2000


@dataclass(frozen=True)
class Motion:
    frames: list[bytes]  # viewport PNGs at page times 0, step_ms, 2 × step_ms, ...
    strip_png: bytes  # the frames left to right
    webp: bytes  # the frames as a looping, lossless animated WebP, step_ms per frame
    step_ms: int
    failure: str | None = None


def record_motion(
    browser: Browser,
    read: Reader,
    route: str,
    viewport: Viewport,
    *,
    steps: Sequence[Step] = (),
    frames: int = FRAMES,
    step_ms: int = STEP_MS,
    settle_ms: int = 5000,
    step_timeout_ms: int = STEP_TIMEOUT_MS,
) -> Motion:
    """Record ``frames`` frames, ``step_ms`` of page time apart, of the transition that
    ``steps`` (or, without steps, the page load) starts on ``route``."""
    if frames < 1 or step_ms < 1:
        raise ValueError("frames and step_ms must be at least 1")
    with open_page(browser, read, viewport, motion=True) as session:
        load(session, route, settle_ms, still=False)
        if steps and session.status == 200:
            failed = run_steps(
                session,
                steps,
                route=route,
                timeout_ms=step_timeout_ms,
                settle_ms=step_timeout_ms,
                after_last=False,
            )
            session.failures.extend([failed] if failed else [])
        shots = _frames(session, frames, step_ms)
        failure = "; ".join(session.failures) or None
    return Motion(shots, strip(shots), animated_webp(shots, step_ms), step_ms, failure)


def _frames(session: Session, count: int, step_ms: int) -> list[bytes]:
    shots = []
    for index in range(count):
        if index:
            advance_clock(session, step_ms)
        _seek(session, index * step_ms)
        shots.append(_frame(session))
    return shots


def _seek(session: Session, now_ms: int) -> None:
    """Pause every animation at its own time since the frame it was first seen in."""
    try:
        with guard(session):
            session.world.evaluate(f"({_SEEK_JS})({now_ms})")
    except PlaywrightError as exc:
        session.failures.append(f"motion: seeking animations failed: {first_line(exc)}")


def _frame(session: Session) -> bytes:
    try:
        with guard(session):
            return session.page.screenshot(caret="hide", timeout=FRAME_TIMEOUT_MS)
    except PlaywrightError as exc:
        session.failures.append(f"motion: frame failed: {first_line(exc)}")
        return blank_png(session.viewport)


def strip(frames: Sequence[bytes]) -> bytes:
    """The frames side by side, left to right, top-aligned on white."""
    images = [Image.open(io.BytesIO(f)).convert("RGB") for f in frames]
    width = sum(i.width for i in images)
    sheet = Image.new("RGB", (width, max(i.height for i in images)), "white")
    x = 0
    for image in images:
        sheet.paste(image, (x, 0))
        x += image.width
    return _encode(sheet, "PNG")


def animated_webp(frames: Sequence[bytes], step_ms: int) -> bytes:
    """A looping, lossless animated WebP showing each frame for ``step_ms``."""
    images = [Image.open(io.BytesIO(f)).convert("RGB") for f in frames]
    return _encode(
        images[0],
        "WEBP",
        save_all=True,
        append_images=images[1:],
        duration=step_ms,
        loop=0,
        lossless=True,
        method=4,
    )


def _encode(image: Image.Image, fmt: str, **options: object) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **options)
    return out.getvalue()


# Runs in the session's isolated world, which lasts as long as the document: so does the map.
_SEEK_JS = """(now) => {
  const seen = globalThis.reconSeen || (globalThis.reconSeen = new WeakMap());
  for (const animation of document.getAnimations()) {
    if (!seen.has(animation)) seen.set(animation, now);
    animation.pause();
    animation.currentTime = now - seen.get(animation);
  }
}"""
