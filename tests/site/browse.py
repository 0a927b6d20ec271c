"""Browsing a published site in Debian's chromium: what a page asked for, logged and links to.

From disk, pages open as ``file://`` in the harness's own chromium (recon.render.open_browser:
an empty network namespace, pinned fonts); served, the folder is served on 127.0.0.1 and
chromium (``/usr/bin/chromium`` through playwright) runs on the host's network.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from playwright.sync_api import Browser, Page, sync_playwright

from recon.render.browser import chromium_path

ARTIFACTS = Path(
    os.environ.get("RECON_TEST_ARTIFACTS") or Path(__file__).resolve().parents[2] / "test-artifacts"
)
LINKS_JS = """() => Array.from(document.querySelectorAll('[href], [src]')).map(
  el => el.href !== undefined && el.getAttribute('href') !== null ? el.href : el.src)"""
WIDTH_JS = """() => [document.documentElement.scrollWidth, document.body.scrollWidth,
  document.documentElement.clientWidth]"""


@dataclass
class Visit:
    """What one page load did."""

    url: str
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)


def visit(page: Page, url: str) -> Visit:
    """Load ``url`` in ``page`` (listeners attached for this load only) and read its links."""
    seen = Visit(url)
    listeners = []
    for event, handler in (
        ("request", lambda r: seen.requests.append(r.url)),
        ("console", lambda m: seen.errors.append(m.text) if m.type == "error" else None),
        ("pageerror", lambda e: seen.errors.append(f"page error: {e}")),
        ("requestfailed", lambda r: _failed(seen, r.url, r.failure)),
    ):
        page.on(event, handler)
        listeners.append((event, handler))
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")  # lazy images start after load; let them finish
    seen.links = [str(x) for x in page.evaluate(LINKS_JS) if x]
    for event, handler in listeners:
        page.remove_listener(event, handler)
    return seen


def _failed(seen: Visit, url: str, failure: str | None) -> None:
    """Log a failed request, except the favicon's cut short: chromium asks for it after
    ``load`` and the next navigation aborts it (``net::ERR_ABORTED``). A missing favicon
    still fails (``ERR_FILE_NOT_FOUND`` from disk, 404 served)."""
    if not (url.endswith("/favicon.svg") and failure == "net::ERR_ABORTED"):
        seen.errors.append(f"failed: {url} {failure}")


def overflow(page: Page) -> int:
    """How many pixels the page is wider than its viewport (0: no horizontal scroll)."""
    widths = page.evaluate(WIDTH_JS)
    return int(max(widths[0], widths[1]) - widths[2])


def local_path(url: str, root_url: str, folder: Path) -> Path | None:
    """The file a URL under ``root_url`` names in ``folder`` (None: outside it)."""
    parts = urlsplit(url)
    if not url.startswith(root_url):
        return None
    rel = unquote(parts.path)[len(unquote(urlsplit(root_url).path)) :]
    target = (folder / rel).resolve()
    return target if target.is_relative_to(folder.resolve()) else None


@contextmanager
def served(folder: Path) -> Iterator[str]:
    """``folder`` served on 127.0.0.1 (an ephemeral port) for the block; yields its URL."""
    handler = functools.partial(_Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def host_chromium() -> Iterator[Browser]:
    """Debian's chromium through playwright on the host network (for a served site)."""
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), headless=True)
        try:
            yield browser
        finally:
            browser.close()
