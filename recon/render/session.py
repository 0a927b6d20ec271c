"""One sealed page as the harness holds it, and the guard that keeps page script bounded.

A :class:`Session` is a page of a fresh browser context (:func:`recon.render.page.open_page`)
with its DevTools session, the isolated world the harness's own scripts run in, and what
the page did: its network log, console errors and failures. The page's problems are
recorded in ``Session.failures``; only the harness's own faults (chromium, the store)
raise :class:`HarnessError`.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from PIL import Image
from playwright.sync_api import CDPSession, Page
from playwright.sync_api import Error as PlaywrightError

from recon.errors import HarnessError
from recon.model.viewport import Viewport
from recon.render.serve import NetworkEvent
from recon.render.snapshot import IsolatedWorld

CRASHED = "the page crashed its renderer"
"""A :class:`~recon.errors.PageError`'s reason: chromium reported the page's renderer
crashed (out of memory under the bounds of recon.render.netns, or a renderer fault)."""
SCRIPT_LIMIT_S = 3.0
HARNESS_LIMIT_S = 30.0
"""The guard's limit around the harness's own heavy work: DOM snapshots (the document
tree, a script over every element, the accessibility tree) and checkpoint screenshots,
whose time grows with the page and the machine's load. markdown-docs' faithful answer
(about 6,000 elements) took over 3 s to snapshot at load average 25 on 2 cores, and the
guard at ``SCRIPT_LIMIT_S`` terminated it and blamed the page. Page script that stalls
this work is still terminated and recorded, after this long."""


@dataclass
class Session:
    page: Page
    cdp: CDPSession
    viewport: Viewport
    world: IsolatedWorld  # where the harness's own scripts run, out of the page's reach
    motion: bool = False  # animations are stepped by recon.render.motion, not finished
    network: list[NetworkEvent] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # the page's problems, recorded
    broken: list[Exception] = field(default_factory=list)  # ``read`` failures: harness's fault
    crashed: bool = False  # the page's renderer crashed (chromium's ``crash`` event)
    status: int = 0  # HTTP status of the route's document
    last_request: float = 0.0  # time.monotonic() of the latest request the page made

    def record(self, event: NetworkEvent) -> None:
        self.network.append(event)
        self.last_request = time.monotonic()


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


def raise_if_broken(session: Session) -> None:
    if session.broken:
        exc = session.broken[0]
        raise HarnessError(f"reading the build failed while serving it: {exc}") from exc


def ms_since(start: float) -> float:
    return round((time.monotonic() - start) * 1000, 1)


def first_line(exc: PlaywrightError) -> str:
    return exc.message.splitlines()[0] if exc.message else str(exc)


def blank_png(viewport: Viewport) -> bytes:
    """What a capture shows when chromium cannot take a screenshot at all."""
    out = io.BytesIO()
    Image.new("RGB", (viewport.width, viewport.height), "white").save(out, format="PNG")
    return out.getvalue()
