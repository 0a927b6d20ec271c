"""The sealed page every capture, probe and motion recording runs in.

A fresh browser context per page, the build served into it by :mod:`recon.render.serve`
(interception only: no port, no server; chromium itself has no network,
:mod:`recon.render.netns`). Candidate JavaScript sees a paused clock at
:data:`FROZEN_TIME` that moves only when the harness advances it
(:mod:`recon.render.settle`), a seeded ``Math.random`` and ``crypto.getRandomValues``,
and a fixed locale, timezone, colour scheme, device scale factor and user agent.

Nothing the page does can stall the harness: every wait is bounded, and page script
still running :data:`SCRIPT_LIMIT_S` into a call that has no timeout of its own is
terminated (:func:`guard`). The page's problems are recorded in ``Session.failures``;
only the harness's own faults (chromium, the store) raise :class:`HarnessError`. A page
whose renderer crashes ends its job at once with :class:`PageError` (``CRASHED``), which
:mod:`recon.render.pool` retries once on a fresh browser and then leaves to the page.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from functools import partial

from playwright.sync_api import Browser, ConsoleMessage, Page
from playwright.sync_api import Error as PlaywrightError

from recon.errors import HarnessError, PageError
from recon.render.serve import ORIGIN, NetworkEvent, Reader, refuse_socket, serve
from recon.render.session import (
    CRASHED,
    SCRIPT_LIMIT_S,
    Session,
    Viewport,
    blank_png,
    first_line,
    guard,
    ms_since,
    raise_if_broken,
)
from recon.render.settle import (
    ADVANCE_MS,
    LATE,
    advance_clock,
    settle,
    settle_step,
    wait_quiet,
)
from recon.render.sidechannels import report_side_channels
from recon.render.snapshot import IsolatedWorld

__all__ = [
    "ADVANCE_MS",
    "SCRIPT_LIMIT_S",
    "NetworkEvent",
    "Reader",
    "Session",
    "Viewport",
    "advance_clock",
    "blank_png",
    "first_line",
    "guard",
    "load",
    "ms_since",
    "open_page",
    "raise_if_broken",
    "settle_step",
    "wait_quiet",
]

FROZEN_TIME = datetime(2024, 1, 1, tzinfo=UTC)
COMMIT_TIMEOUT_MS = 30_000
READY_POLL_MS = 25


@contextmanager
def open_page(
    browser: Browser, read: Reader, viewport: Viewport, *, motion: bool = False
) -> Iterator[Session]:
    """A page in a fresh, intercepted, clock-frozen context; the context closes on exit.

    ``motion`` pages keep the page's motion preferences (no reduced motion) and freeze the
    document timeline, so that :mod:`recon.render.motion` steps CSS animations itself.
    """
    context = browser.new_context(
        viewport={"width": viewport.width, "height": viewport.height},
        user_agent=user_agent(browser),
        device_scale_factor=1,
        reduced_motion="no-preference" if motion else "reduce",
        locale="en-US",
        timezone_id="UTC",
        color_scheme="light",
        service_workers="block",
        bypass_csp=True,  # so the stills stylesheet applies under any page CSP
    )
    try:
        # Late-bound: the session exists before the page makes its first request (the
        # navigation in ``load``) and before any page script can call the reporter.
        def log(event: NetworkEvent) -> None:
            session.record(event)

        broken: list[Exception] = []
        report_side_channels(context, log, after=_SEED_JS)
        # pause_at installs the fake clock itself; a separate install() first would let
        # performance.now() start at the real milliseconds between the two calls.
        context.clock.pause_at(FROZEN_TIME)
        # Interception is set on the context before its page exists, so the page is made
        # intercepted (set on a live page, it costs extra round trips to chromium).
        context.route("**/*", partial(serve, read, log, broken))
        context.route_web_socket("**/*", partial(refuse_socket, log))
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        world = IsolatedWorld(cdp)
        session = Session(
            page=page, cdp=cdp, viewport=viewport, world=world, motion=motion, broken=broken
        )
        if motion:
            session.cdp.send("Animation.enable")
            session.cdp.send("Animation.setPlaybackRate", {"playbackRate": 0})
        context.on("page", partial(_close_popup, page))
        page.on("crash", partial(_on_crash, session))
        page.on("console", partial(_on_console, session.console))
        page.on("pageerror", partial(_on_page_error, session.console))
        with _crash_raised(session):
            yield session
            raise_if_broken(session)
    finally:
        if browser.is_connected():
            with suppress(PlaywrightError):  # a context whose page crashed may refuse it
                context.close()


@contextmanager
def _crash_raised(session: Session) -> Iterator[None]:
    """A crashed renderer ends the page's job as a :class:`PageError`, whatever the job
    made of the errors it met (a capture records them as failures, nondeterministically)."""
    try:
        yield
    except Exception as exc:
        if session.crashed:
            raise PageError(CRASHED) from exc
        raise
    if session.crashed:
        raise PageError(CRASHED)


def _on_crash(session: Session, page: Page) -> None:
    """Mark the session crashed and close its context at once: DevTools commands sent to a
    crashed page may never be answered, and the job must end now, not at its budget. The
    sync API cannot be called from its own event handler, so the close is scheduled on its
    event loop (playwright internals, as in :func:`recon.render.session.guard`; without
    them the job ends at its budget instead)."""
    session.crashed = True
    impl = getattr(page.context, "_impl_obj", None)
    loop: asyncio.AbstractEventLoop | None = getattr(impl, "_loop", None)
    if impl is not None and loop is not None:
        closing = loop.create_task(impl.close(reason=CRASHED))
        closing.add_done_callback(lambda task: task.cancelled() or task.exception())


def user_agent(browser: Browser) -> str:
    """Chromium's own Linux user agent, without the ``HeadlessChrome`` automation tell."""
    major = browser.version.split(".")[0]
    return (
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        f"Chrome/{major}.0.0.0 Safari/537.36"
    )


def _close_popup(main: Page, page: Page) -> None:
    """Close a popup as soon as it opens (its first request is in the network log): the
    capture is of the main page, and an open popup can slow the opener's rendering frames
    to one a second (chromium did in 5 of 12 tries), which would stall settling."""
    if page is not main:
        page.close()


def _on_console(console: list[str], message: ConsoleMessage) -> None:
    if message.type == "error":
        console.append(message.text)


def _on_page_error(console: list[str], error: PlaywrightError) -> None:
    console.append(f"{error.name}: {error.message}")


def load(session: Session, route: str, settle_ms: int, *, still: bool = True) -> dict[str, float]:
    """Navigate and wait, within ``settle_ms`` in all; never raises for a page that hangs.

    ``still`` pages get the stills stylesheet, ADVANCE_MS of page time, and are settled
    until still (:func:`recon.render.settle.settle`); motion pages get none of it (their
    time starts when their frames start).
    """
    page = session.page
    start = time.monotonic()
    deadline = start + settle_ms / 1000
    _navigate(session, route)
    settled = _bounded(deadline, lambda ms: page.wait_for_load_state("load", timeout=ms))
    timings = {"goto": ms_since(start)}
    start = time.monotonic()
    settled &= wait_quiet(session, deadline)
    if still:
        settled &= _attempt(lambda: _guarded_style(session))
        advance_clock(session, ADVANCE_MS)
        settled &= wait_quiet(session, deadline)  # for what the page's timers requested
    settled &= _ready(session, deadline)
    if not settled:
        session.failures.append(
            f"the page did not settle within {settle_ms} ms (load, quiet network, fonts, images)"
        )
    elif still:
        begun = time.monotonic()
        went = settle(session)
        timings["settle_still"] = ms_since(begun)
        timings["still"] = 1.0 if went == "still" else 0.0
        settled = went != "late"
        session.failures.extend([] if settled else [LATE])
    timings["settle"] = ms_since(start)
    timings["settled"] = 1.0 if settled else 0.0
    raise_if_broken(session)
    return timings


def _guarded_style(session: Session) -> None:
    """Add the stills stylesheet to the page from an isolated world (page script can't
    intercept it), then to every frame in it (an ``<iframe>``, its ``srcdoc`` page too).
    A frame's copy is added through playwright's evaluation in that frame, which reaches a
    frame wherever chromium renders it (every frame is in the page's process under
    ``LAUNCH_ARGS``, but the page's isolated world is the main frame's alone); a frame's
    own script could undo only its own frame's copy."""
    add = _ADD_STYLE_JS % json.dumps(_STILL_CSS)
    with guard(session):
        session.world.evaluate(add)
        for frame in session.page.frames:
            if frame is session.page.main_frame:
                continue
            with suppress(PlaywrightError):  # a frame gone meanwhile
                frame.evaluate(add)


def _ready(session: Session, deadline: float) -> bool:
    """Poll, in the isolated world, until the document, fonts and images are complete."""
    while True:
        try:
            with guard(session):
                if session.world.evaluate(_READY_JS):
                    return True
        except PlaywrightError:
            return False
        if time.monotonic() >= deadline:
            return False
        session.page.wait_for_timeout(READY_POLL_MS)


def _navigate(session: Session, route: str) -> None:
    """Commit the document: no candidate code has run yet, so a failure is the harness's."""
    url = f"{ORIGIN}/{route.lstrip('/')}"
    try:
        response = session.page.goto(url, wait_until="commit", timeout=COMMIT_TIMEOUT_MS)
    except PlaywrightError as exc:
        raise_if_broken(session)
        raise HarnessError(f"chromium did not commit {url}: {exc.message}") from exc
    session.status = response.status if response is not None else 0
    if session.status != 200:
        session.failures.append(f"route {route}: not in the build (HTTP {session.status})")


def _bounded(deadline: float, wait: Callable[[float], object]) -> bool:
    """Run ``wait(timeout_ms)`` with what is left before ``deadline``; False if it fails."""
    left_ms = (deadline - time.monotonic()) * 1000
    if left_ms < 1:  # playwright reads timeout=0 as "no timeout"
        return False
    return _attempt(lambda: wait(left_ms))


def _attempt(step: Callable[[], object]) -> bool:
    """False when the page makes ``step`` fail (a page problem, recorded as unsettled)."""
    try:
        step()
    except PlaywrightError:
        return False
    return True


# --- page-side snippets (determinism and readiness) -------------------------------------

_SEED_JS = """(() => {
  let a = 0x5eed1234;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  Math.random = function random() { return next(); };
  if (typeof Crypto !== 'undefined') {
    Crypto.prototype.getRandomValues = function getRandomValues(array) {
      const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (next() * 256) | 0;
      return array;
    };
    Crypto.prototype.randomUUID = function randomUUID() {
      const b = this.getRandomValues(new Uint8Array(16));
      b[6] = (b[6] & 0x0f) | 0x40; b[8] = (b[8] & 0x3f) | 0x80;
      const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
      const cut = [[0, 8], [8, 12], [12, 16], [16, 20], [20, 32]];
      return cut.map(([i, j]) => h.slice(i, j)).join('-');
    };
  }
})();"""

_STILL_CSS = """*, *::before, *::after {
  animation-delay: 0s !important;
  animation-duration: 0s !important;
  animation-iteration-count: 1 !important;
  caret-color: transparent !important;
  scroll-behavior: auto !important;
}
::-webkit-media-controls { display: none !important; }"""
"""Collapsed animations, no caret, and no native media controls: chromium draws a
``<video controls>``'s bar (and a video's in a frame without script) on real time, with a
fade and a loading spinner, so two stills of the same page would differ."""

_ADD_STYLE_JS = """(() => {
  const style = document.createElement('style');
  style.textContent = %s;
  (document.head || document.documentElement).append(style);
})()"""

_READY_JS = """document.readyState === 'complete'
  && document.fonts.status === 'loaded'
  && Array.from(document.images).every((i) => i.complete || i.loading === 'lazy')"""
