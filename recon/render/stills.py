"""Stills that are proven stable: the same pixels a frame apart.

A settled page (:func:`recon.render.settle.settle`) should look the same in the next
frame. :func:`stable_stills` checks it: it takes the full-page still, moves page time on
by one frame (and drains the page), takes it again, and compares. Equal bytes: the still
is the page's. Different: the page is settled again and the pair retaken, up to
:data:`TRIES` pairs. A page that still differs is recorded as unstable, with the number of
pixels that differed in the last pair, instead of passing one arbitrary frame off as the
page's look.

A full-page still is clipped to :data:`MAX_WIDTH` x :data:`MAX_HEIGHT` CSS pixels and at
most :data:`MAX_PIXELS` pixels (:func:`still_clip`), from the page's top left corner. A
page larger than that (one 10^6 px tall made chromium spend minutes and then crash) is
recorded as a failure naming both sizes (:func:`clip_note`): the still shows only part of
the point, so nothing is graded from it. The page's size is read once per capture, in the
harness's isolated world, as playwright measures a full page.

Before the stills, the page's finished animations are *retired* (:func:`retire`): each
one's effect is written into its element's inline style (``Animation.commitStyles``) and
the animation cancelled, so the page looks the same and is painted as a page that never
animated. A finished animation that fills its end state (``animation-fill-mode:
forwards``, which the stills stylesheet reaches at once) left chromium free to paint its
element on a layer of its own or not, decided by when it last looked: an edge at a
fractional position then came out a row different from capture to capture (three
versions in twelve captures of a real page; one in twelve with it retired). An animation
whose effect cannot be committed (on a pseudo-element, or an element not rendered) is
left running as it is.
"""

from __future__ import annotations

import io
from contextlib import suppress
from dataclasses import dataclass

from PIL import Image, ImageChops
from playwright.sync_api import Error as PlaywrightError

from recon.render.session import Session, blank_png, first_line, guard
from recon.render.settle import frame_apart, settle

TRIES = 3  # pairs of stills, a frame apart, before a page is called unstable
SHOT_TIMEOUT_MS = 30_000
SHOT_LIMIT_S = 15.0  # page script running this far into a screenshot is terminated
MAX_WIDTH = 4096  # the widest viewport a contract may name (recon.model.viewport)
MAX_HEIGHT = 32_768
MAX_PIXELS = 2**25  # 1440 x 23,301; a 32-bit bitmap of 128 MiB
Clip = tuple[int, int]  # width, height from the page's top left corner


def still_clip(width: int, height: int) -> Clip:
    """The part of a ``width`` x ``height`` page a full-page still shows."""
    shown = max(1, min(width, MAX_WIDTH))
    return shown, max(1, min(height, MAX_HEIGHT, MAX_PIXELS // shown))


def clip_note(width: int, height: int) -> str | None:
    """The failure a clipped full-page still records, or None when it shows the page."""
    clip = still_clip(width, height)
    if clip == (width, height):
        return None
    return (
        f"full-page still clipped to {clip[0]}x{clip[1]} px of the page's {width}x{height} px "
        f"(at most {MAX_WIDTH} px wide, {MAX_HEIGHT} px tall, {MAX_PIXELS} pixels)"
    )


@dataclass(frozen=True)
class Stability:
    """Whether a capture's full-page still was the same a frame later."""

    stable: bool
    pairs: int  # pairs of stills taken (1 when the first pair agreed; 0: not proven)
    differing_pixels: int = 0  # in the last pair; 0 when stable
    size: tuple[int, int] = (0, 0)  # of the still (width, height)

    @property
    def status(self) -> str:
        return "stable" if self.stable else "unstable"

    def describe(self) -> str:
        if self.stable:
            return "stable"
        width, height = self.size
        return (
            f"unstable: {self.differing_pixels} of {width * height} pixels differed between "
            f"stills a frame apart, {self.pairs} times"
        )


def stable_stills(session: Session) -> tuple[bytes, bytes, Stability]:
    """The full-page and viewport stills, once the full page is the same a frame apart.

    When chromium cannot take a full-page still at all (recorded as a failure), there is
    nothing to prove: the stills are returned as they are, with ``pairs`` 0."""
    clip = full_clip(session)
    retire(session)
    full = shot(session, full=clip)
    shown = still(session)
    pairs = 0
    while full is not None:
        pairs += 1
        frame_apart(session)
        again = shot(session, full=clip)
        if again is None:
            break
        if again == full:
            return full, shown, Stability(True, pairs, 0, png_size(full))
        if pairs >= TRIES:
            count, size = differing_pixels(full, again)
            return again, still(session), Stability(False, pairs, count, size)
        settle(session)
        retire(session)
        full, shown = shot(session, full=clip), still(session)
    return full or blank_png(session.viewport), shown, Stability(True, 0)


def unproven_stills(session: Session) -> tuple[bytes, bytes, Stability]:
    """The two stills taken once each, stability unknown (``pairs`` 0)."""
    clip = full_clip(session)
    retire(session)
    full = still(session, full=clip)
    return full, still(session), Stability(True, 0, 0, png_size(full))


def retire(session: Session) -> int:
    """Retire the finished animations of the page and of every frame in it (module
    docstring); how many. The main frame's from the harness's isolated world, a frame's
    through playwright's evaluation in it (as the stills stylesheet reaches frames): a
    frame's own script could keep only its own frame's animations."""
    retired = 0
    with suppress(PlaywrightError), guard(session):
        retired += int(session.world.evaluate(_RETIRE_JS))
    for frame in session.page.frames:
        if frame is session.page.main_frame:
            continue
        with suppress(PlaywrightError), guard(session):  # a frame gone meanwhile
            retired += int(frame.evaluate(_RETIRE_JS))
    return retired


def full_clip(session: Session) -> Clip:
    """The clip of this page's full-page stills; a page larger than the caps is recorded."""
    try:
        with guard(session):
            size = session.world.evaluate(_PAGE_SIZE_JS)
    except PlaywrightError:
        size = None  # its screenshot will record what failed
    if size is None:  # no body yet (playwright measures it when it has one)
        return still_clip(MAX_WIDTH, MAX_HEIGHT)
    width, height = size
    note = clip_note(int(width), int(height))
    session.failures.extend([note] if note else [])
    return still_clip(int(width), int(height))


def still(session: Session, *, full: Clip | None = None) -> bytes:
    """A screenshot; a blank one (and a recorded failure) if chromium cannot take it."""
    png = shot(session, full=full)
    return png if png is not None else blank_png(session.viewport)


def shot(session: Session, *, full: Clip | None = None) -> bytes | None:
    """A screenshot, the full page within the ``full`` clip or else the viewport; None (and
    a recorded failure) if chromium cannot take it."""
    error = ""
    clip = None if full is None else {"x": 0, "y": 0, "width": full[0], "height": full[1]}
    for _ in range(2):  # a script terminated by the guard fails the first try
        try:
            with guard(session, SHOT_LIMIT_S):
                return session.page.screenshot(
                    full_page=full is not None,
                    clip=clip,  # type: ignore[arg-type]
                    animations="disabled",
                    caret="hide",
                    timeout=SHOT_TIMEOUT_MS,
                )
        except PlaywrightError as exc:
            error = first_line(exc)
    session.failures.append(f"screenshot failed: {error}")
    return None


def differing_pixels(first: bytes, second: bytes) -> tuple[int, tuple[int, int]]:
    """Pixels that differ between two PNGs (the larger canvas, the rest white), and its size."""
    a, b = _rgb(first), _rgb(second)
    width, height = max(a.width, b.width), max(a.height, b.height)
    red, green, blue = ImageChops.difference(
        _padded(a, width, height), _padded(b, width, height)
    ).split()
    changed = ImageChops.lighter(ImageChops.lighter(red, green), blue)  # per pixel, any channel
    return width * height - changed.histogram()[0], (width, height)


def png_size(png: bytes) -> tuple[int, int]:
    width, height = Image.open(io.BytesIO(png)).size
    return int(width), int(height)


def _rgb(png: bytes) -> Image.Image:
    return Image.open(io.BytesIO(png)).convert("RGB")


def _padded(image: Image.Image, width: int, height: int) -> Image.Image:
    canvas = Image.new("RGB", (width, height), "white")
    canvas.paste(image, (0, 0))
    return canvas


_RETIRE_JS = """(() => {
  let retired = 0;
  for (const animation of document.getAnimations()) {
    if (animation.playState !== 'finished') continue;
    try {
      animation.commitStyles();
    } catch (error) {
      continue;  // a pseudo-element's, or its element is not rendered: left as it is
    }
    animation.cancel();
    retired++;
  }
  return retired;
})()"""

# As playwright measures a full page for its full-page screenshots (null before a body).
_PAGE_SIZE_JS = """(() => {
  const b = document.body, d = document.documentElement;
  if (!b || !d) return null;
  return [
    Math.max(b.scrollWidth, d.scrollWidth, b.offsetWidth, d.offsetWidth, b.clientWidth,
             d.clientWidth),
    Math.max(b.scrollHeight, d.scrollHeight, b.offsetHeight, d.offsetHeight, b.clientHeight,
             d.clientHeight),
  ];
})()"""
