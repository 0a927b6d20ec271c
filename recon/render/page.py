"""The sealed page every capture, probe and motion recording runs in.

A fresh browser context per page, the build served into it by :mod:`recon.render.serve`
(interception only: no port, no server; chromium itself has no network,
:mod:`recon.render.netns`). Candidate JavaScript sees a paused clock at
:data:`FROZEN_TIME`, a seeded ``Math.random`` and ``crypto.getRandomValues``, and a
fixed locale, timezone, colour scheme, device scale factor and user agent.

Nothing the page does can stall the harness: every wait is bounded, and page script
still running :data:`SCRIPT_LIMIT_S` into a call that has no timeout of its own is
terminated (:func:`guard`). The page's problems are recorded in ``Session.failures``;
only the harness's own faults (chromium, the store) raise :class:`HarnessError`.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial

from PIL import Image
from playwright.sync_api import Browser, CDPSession, ConsoleMessage, Page
from playwright.sync_api import Error as PlaywrightError

from recon.errors import HarnessError
from recon.render.serve import ORIGIN, NetworkEvent, Reader, refuse_socket, serve
from recon.render.sidechannels import report_side_channels
from recon.render.snapshot import IsolatedWorld

FROZEN_TIME = datetime(2024, 1, 1, tzinfo=UTC)
ADVANCE_MS = 1000
COMMIT_TIMEOUT_MS = 30_000
SCRIPT_LIMIT_S = 3.0
QUIET_MS = 200  # no new request for this long: the page has made the requests it will
READY_POLL_MS = 25
GRACE_MS = 50  # for requests a script has issued but chromium has not yet routed


@dataclass(frozen=True)
class Viewport:
    name: str
    width: int
    height: int


@dataclass
class Session:
    page: Page
    cdp: CDPSession
    viewport: Viewport
    world: IsolatedWorld  # where the harness's own scripts run, out of the page's reach
    network: list[NetworkEvent] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # the page's problems, recorded
    broken: list[Exception] = field(default_factory=list)  # ``read`` failures: harness's fault
    status: int = 0  # HTTP status of the route's document
    last_request: float = 0.0  # time.monotonic() of the latest request the page made

    def record(self, event: NetworkEvent) -> None:
        self.network.append(event)
        self.last_request = time.monotonic()


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
        # Late-bound: the session exists before any page script can call the reporter.
        report_side_channels(context, lambda event: session.record(event))
        context.add_init_script(_SEED_JS)
        # pause_at installs the fake clock itself; a separate install() first would let
        # performance.now() start at the real milliseconds between the two calls.
        context.clock.pause_at(FROZEN_TIME)
        page = context.new_page()
        cdp = context.new_cdp_session(page)
        session = Session(page=page, cdp=cdp, viewport=viewport, world=IsolatedWorld(cdp))
        if motion:
            session.cdp.send("Animation.enable")
            session.cdp.send("Animation.setPlaybackRate", {"playbackRate": 0})
        context.route("**/*", partial(serve, read, session.record, session.broken))
        context.route_web_socket("**/*", partial(refuse_socket, session.record))
        context.on("page", partial(_close_popup, page))
        page.on("console", partial(_on_console, session.console))
        page.on("pageerror", partial(_on_page_error, session.console))
        yield session
        raise_if_broken(session)
    finally:
        context.close()


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

    ``still`` pages get the stills stylesheet and ADVANCE_MS of page time; motion pages
    get neither (their time starts when their frames start).
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
    timings["settle"] = ms_since(start)
    timings["settled"] = 1.0 if settled else 0.0
    if not settled:
        session.failures.append(
            f"the page did not settle within {settle_ms} ms (load, quiet network, fonts, images)"
        )
    raise_if_broken(session)
    return timings


def _guarded_style(session: Session) -> None:
    """Add the stills stylesheet from an isolated world: page script can't intercept it."""
    with guard(session):
        session.world.evaluate(_ADD_STYLE_JS % json.dumps(_STILL_CSS))


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


def raise_if_broken(session: Session) -> None:
    if session.broken:
        exc = session.broken[0]
        raise HarnessError(f"reading the build failed while serving it: {exc}") from exc


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


def advance_clock(session: Session, ms: int) -> None:
    """Fire the page's timers and frames for exactly ``ms`` of fake time."""
    try:
        with guard(session):
            session.page.clock.run_for(ms)
    except PlaywrightError as exc:  # the first error thrown by a page timer
        session.console.append(first_line(exc).removeprefix("Clock.run_for: "))


def settle_step(session: Session, timeout_ms: int) -> None:
    """After a step: exactly ADVANCE_MS of page time, then wait for the requests it made."""
    advance_clock(session, ADVANCE_MS)
    wait_quiet(session, time.monotonic() + timeout_ms / 1000)


def wait_quiet(session: Session, deadline: float) -> bool:
    """Wait until GRACE_MS have passed and no request has come for QUIET_MS (True), or
    until ``deadline`` (False). Every request of the page passes through ``serve``, so
    this sees them all; it replaces playwright's "networkidle" (a fixed 500 ms)."""
    grace_end = time.monotonic() + GRACE_MS / 1000
    while True:
        quiet_at = max(grace_end, session.last_request + QUIET_MS / 1000)
        now = time.monotonic()
        if now >= quiet_at:
            return True
        if now >= deadline:
            return False
        session.page.wait_for_timeout(max(1.0, (min(quiet_at, deadline) - now) * 1000))


@contextmanager
def guard(session: Session, seconds: float = SCRIPT_LIMIT_S) -> Iterator[None]:
    """Terminate page script still running ``seconds`` into the block (and record it).

    ``clock.run_for`` and evaluations (playwright's and the DevTools protocol's) take no
    timeout, so a page script that never returns (``while (true) {}`` in a timer or a
    handler) would block them for ever. ``Runtime.terminateExecution`` is one of the
    DevTools commands chromium runs as an interrupt while the page's main thread is
    busy. The sync API offers no way to act while a call blocks except its own event
    loop, so the timer is set on that loop (playwright internals: without them this
    degrades to no guard; tests/render/test_hostile.py would then fail).
    """
    impl = getattr(session.cdp, "_impl_obj", None)
    loop: asyncio.AbstractEventLoop | None = getattr(impl, "_loop", None)
    if impl is None or loop is None:
        yield
        return

    def terminate() -> None:
        session.failures.append(f"page script ran past {seconds:g} s; terminated")
        sent = loop.create_task(impl.send("Runtime.terminateExecution", None, None))
        sent.add_done_callback(lambda task: task.cancelled() or task.exception())

    timer = loop.call_later(seconds, terminate)
    try:
        yield
    finally:
        timer.cancel()


def ms_since(start: float) -> float:
    return round((time.monotonic() - start) * 1000, 1)


def first_line(exc: PlaywrightError) -> str:
    return exc.message.splitlines()[0] if exc.message else str(exc)


def blank_png(viewport: Viewport) -> bytes:
    """What a capture shows when chromium cannot take a screenshot at all."""
    out = io.BytesIO()
    Image.new("RGB", (viewport.width, viewport.height), "white").save(out, format="PNG")
    return out.getvalue()


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
  transition: none !important;
  caret-color: transparent !important;
  scroll-behavior: auto !important;
}"""

_ADD_STYLE_JS = """(() => {
  const style = document.createElement('style');
  style.textContent = %s;
  (document.head || document.documentElement).append(style);
})()"""

_READY_JS = """document.readyState === 'complete'
  && document.fonts.status === 'loaded'
  && Array.from(document.images).every((i) => i.complete || i.loading === 'lazy')"""
