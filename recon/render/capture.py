"""Deterministic stills of a build: screenshots, a DOM snapshot, console and network log.

The build is served at :data:`ORIGIN` from a ``read(path) -> bytes | None`` callable by
request interception; every other request is aborted and logged as ``blocked``.
Candidate JavaScript sees a paused clock at :data:`FROZEN_TIME` (advanced by exactly
:data:`ADVANCE_MS` once the page has loaded), a seeded ``Math.random`` and
``crypto.getRandomValues``, and a stylesheet that collapses animations and transitions.
"""

from __future__ import annotations

import mimetypes
import posixpath
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Any
from urllib.parse import unquote, urlsplit

from playwright.sync_api import Browser, ConsoleMessage, Page, Route, WebSocketRoute
from playwright.sync_api import Error as PlaywrightError

from recon.errors import HarnessError

ORIGIN = "http://recon.invalid"
FROZEN_TIME = datetime(2024, 1, 1, tzinfo=UTC)
ADVANCE_MS = 1000
COMMIT_TIMEOUT_MS = 30_000
DOM_LIMIT = 2000

Reader = Callable[[str], bytes | None]


@dataclass(frozen=True)
class Viewport:
    name: str
    width: int
    height: int


@dataclass(frozen=True)
class NetworkEvent:
    url: str
    outcome: str  # "served" | "missing" | "blocked"


@dataclass(frozen=True)
class Capture:
    full_png: bytes
    viewport_png: bytes
    dom: list[dict[str, Any]]
    console: list[str]
    network: list[NetworkEvent]  # sorted by (url, outcome): arrival order is racy
    timings: dict[str, float]  # wall ms, plus "settled" 1.0/0.0; logged, never hashed


def capture(
    browser: Browser, read: Reader, route: str, viewport: Viewport, *, settle_ms: int = 5000
) -> Capture:
    """Render ``route`` of the build in a fresh context and take its stills."""
    with _open_page(browser, read, viewport) as session:
        timings = _load(session, route, settle_ms)
        start = time.monotonic()
        full = _still(session.page, full_page=True)
        shown = _still(session.page, full_page=False)
        timings["screenshots"] = _ms_since(start)
        dom = session.page.evaluate(_DOM_JS, DOM_LIMIT)
        return Capture(
            full_png=full,
            viewport_png=shown,
            dom=dom,
            console=list(session.console),
            network=sorted(session.network, key=lambda e: (e.url, e.outcome)),
            timings=timings,
        )


def _still(page: Page, *, full_page: bool) -> bytes:
    return page.screenshot(full_page=full_page, animations="disabled", caret="hide")


# --- shared with probe.py: the fresh, sealed page -------------------------------------


@dataclass
class _Session:
    page: Page
    network: list[NetworkEvent] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    broken: list[Exception] = field(default_factory=list)  # ``read`` failures: harness's fault


@contextmanager
def _open_page(browser: Browser, read: Reader, viewport: Viewport) -> Iterator[_Session]:
    """A page in a fresh, intercepted, clock-frozen context; the context closes on exit."""
    context = browser.new_context(
        viewport={"width": viewport.width, "height": viewport.height},
        device_scale_factor=1,
        reduced_motion="reduce",
        locale="en-US",
        timezone_id="UTC",
        color_scheme="light",
        service_workers="block",
        bypass_csp=True,  # so the stills stylesheet applies under any page CSP
    )
    try:
        context.add_init_script(_SEED_JS)
        # pause_at installs the fake clock itself; a separate install() first would let
        # performance.now() start at the real milliseconds between the two calls.
        context.clock.pause_at(FROZEN_TIME)
        session = _Session(page=context.new_page())
        context.route("**/*", partial(_serve, read, session))
        context.route_web_socket("**/*", partial(_refuse_socket, session.network))
        session.page.on("console", partial(_on_console, session.console))
        session.page.on("pageerror", partial(_on_page_error, session.console))
        yield session
        _raise_if_broken(session)
    finally:
        context.close()


def _on_console(console: list[str], message: ConsoleMessage) -> None:
    if message.type == "error":
        console.append(message.text)


def _on_page_error(console: list[str], error: PlaywrightError) -> None:
    console.append(f"{error.name}: {error.message}")


def _load(session: _Session, route: str, settle_ms: int) -> dict[str, float]:
    """Navigate and wait, within ``settle_ms`` in all; never raises for a page that hangs."""
    page = session.page
    start = time.monotonic()
    deadline = start + settle_ms / 1000
    _navigate(session, f"{ORIGIN}/{route.lstrip('/')}")
    settled = _bounded(deadline, lambda ms: page.wait_for_load_state("load", timeout=ms))
    timings = {"goto": _ms_since(start)}
    start = time.monotonic()
    settled &= _bounded(deadline, lambda ms: page.wait_for_load_state("networkidle", timeout=ms))
    settled &= _attempt(lambda: page.add_style_tag(content=_STILL_CSS))
    _advance_clock(session)
    settled &= _bounded(deadline, lambda ms: page.wait_for_function(_READY_JS, timeout=ms))
    timings["settle"] = _ms_since(start)
    timings["settled"] = 1.0 if settled else 0.0
    _raise_if_broken(session)
    return timings


def _navigate(session: _Session, url: str) -> None:
    """Commit the document: no candidate code has run yet, so a failure is the harness's."""
    try:
        session.page.goto(url, wait_until="commit", timeout=COMMIT_TIMEOUT_MS)
    except PlaywrightError as exc:
        _raise_if_broken(session)
        raise HarnessError(f"chromium did not commit {url}: {exc.message}") from exc


def _raise_if_broken(session: _Session) -> None:
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


def _advance_clock(session: _Session) -> None:
    """Fire the page's timers and frames for exactly ADVANCE_MS of fake time."""
    try:
        session.page.clock.run_for(ADVANCE_MS)
    except PlaywrightError as exc:  # the first error thrown by a page timer
        first = exc.message.splitlines()[0] if exc.message else str(exc)
        session.console.append(first.removeprefix("Clock.run_for: "))


def _ms_since(start: float) -> float:
    return round((time.monotonic() - start) * 1000, 1)


# --- serving the build ------------------------------------------------------------------

_ORIGIN_PARTS = urlsplit(ORIGIN)
_MIME = mimetypes.MimeTypes()  # built-in table only: independent of the host's mime.types
_WEB_TYPES = {
    ".js": "text/javascript",
    ".mjs": "text/javascript",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
    ".ttf": "font/ttf",
    ".otf": "font/otf",
    ".webp": "image/webp",
}


def _serve(read: Reader, session: _Session, route: Route) -> None:
    url = route.request.url
    parts = urlsplit(url)
    if (parts.scheme, parts.netloc) != (_ORIGIN_PARTS.scheme, _ORIGIN_PARTS.netloc):
        session.network.append(NetworkEvent(url, "blocked"))
        route.abort("blockedbyclient")
        return
    path = _build_path(parts.path)
    try:
        body = read(path)
    except Exception as exc:  # a store failure must not pass for a broken page
        session.broken.append(exc)
        route.abort("failed")
        return
    if body is None:
        session.network.append(NetworkEvent(url, "missing"))
        route.fulfill(status=404, content_type="text/plain", body=f"not found: {parts.path}")
        return
    session.network.append(NetworkEvent(url, "served"))
    route.fulfill(status=200, content_type=_content_type(path), body=body)


def _refuse_socket(network: list[NetworkEvent], ws: WebSocketRoute) -> None:
    network.append(NetworkEvent(ws.url, "blocked"))
    ws.close()


def _build_path(url_path: str) -> str:
    """URL path -> build-relative path; directories map to their ``index.html``."""
    path = unquote(url_path) or "/"
    if path.endswith("/"):
        path += "index.html"
    return posixpath.normpath(path).lstrip("/")  # normpath of an absolute path drops ".."


def _content_type(path: str) -> str:
    ext = posixpath.splitext(path)[1].lower()
    kind = _WEB_TYPES.get(ext) or _MIME.guess_type(path)[0] or "application/octet-stream"
    textual = kind.startswith("text/") or kind in {"application/json", "image/svg+xml"}
    return f"{kind}; charset=utf-8" if textual else kind


# --- page-side snippets (determinism and the DOM snapshot) ----------------------------

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

_READY_JS = """() => document.readyState === 'complete'
  && document.fonts.status === 'loaded'
  && Array.from(document.images).every((i) => i.complete || i.loading === 'lazy')"""

_DOM_JS = """(limit) => {
  const ownText = (el) => {
    let s = '';
    for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE) s += n.nodeValue;
    return s.replace(/\\s+/g, ' ').trim().slice(0, 200);
  };
  const out = [];
  for (const el of document.querySelectorAll('*')) {
    if (out.length >= limit) break;
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) continue;
    const cs = getComputedStyle(el);
    out.push({
      tag: el.tagName.toLowerCase(),
      role: el.getAttribute('role') || '',
      name: el.getAttribute('aria-label') || '',
      text: ownText(el),
      box: [r.x + scrollX, r.y + scrollY, r.width, r.height].map(Math.round),
      color: cs.color,
      background: cs.backgroundColor,
      font: {family: cs.fontFamily, size: cs.fontSize, weight: cs.fontWeight},
    });
  }
  return out;
}"""
