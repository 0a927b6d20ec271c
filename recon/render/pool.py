"""Browsers owned by worker threads: one browser per worker, reused across jobs, and a
page that breaks its browser costs only its own job.

Playwright's sync API binds a browser to the thread that opened it, while doit may run
cells on several threads (``-P thread``) and runs teardowns on the main thread. So each
browser lives on a thread of this pool; callers hand it jobs (one matrix point's capture,
one viewport's checks, one workflow) and wait for the result. A worker's browser runs one
job at a time, so whatever happens to it during a job happened during that job's page.

Before every job the worker checks its browser: connected, and answering a DevTools
command within :data:`HEALTH_LIMIT_S` (a hung browser is killed). A dead or hung browser
is relaunched and the job runs on the new one: never failed for it.

During a job a watchdog kills the browser once the job runs past its budget
(:data:`JOB_BUDGET_S`); the killed browser's pending calls then fail and the job ends.
A job is **lost** when its budget ran out, when the browser exited while it ran, or when
its page's renderer crashed (:data:`recon.render.session.CRASHED`, raised by
:func:`recon.render.page.open_page`), whatever the job returned. A lost job is run once
more, on a freshly launched browser. Lost again, it is the page's doing: the job raises
:class:`~recon.errors.PageError` with a reason that names only what happened (no error
text, no timings), so a page that crashes chromium gives the same record every time. A
harness hiccup (chromium killed from outside, the machine out of memory) costs one
relaunch; only one that strikes the same job twice in a row is blamed on its page.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from contextlib import ExitStack
from typing import Any, TypeVar

from playwright.sync_api import Browser, CDPSession
from playwright.sync_api import Error as PlaywrightError

from recon.errors import PageError
from recon.render.browser import Chromium, launch, watchdog
from recon.render.session import CRASHED

T = TypeVar("T")
_Job = tuple[Callable[[Browser], Any], Future[Any]] | None

JOB_BUDGET_S = 180.0
"""Wall time of one job (a point's capture, a viewport's checks, a workflow). Every wait
inside a job is bounded on its own (settling, steps, screenshots, the page-script guard);
this is the backstop for what escapes them, generous for a loaded machine."""
HEALTH_LIMIT_S = 30.0
TRIES = 2  # a job lost this many times, each on a fresh browser, is the page's failure
OVERRAN = "the page ran past its {budget:g} s budget"
EXITED = "the browser exited while the page ran"


def verdict(*, overran: bool, connected: bool, crashed: bool, budget_s: float) -> str | None:
    """Why a job was lost (see the module docstring), or None when it was not."""
    if overran:
        return OVERRAN.format(budget=budget_s)
    if not connected:
        return EXITED
    if crashed:
        return CRASHED
    return None


def page_failure(reason: str, tries: int = TRIES) -> str:
    """The :class:`PageError` text of a job lost ``tries`` times, the last for ``reason``."""
    return f"{reason} ({tries} tries, each on a fresh browser)"


class BrowserPool:
    """Up to ``size`` browsers (``RECON_BROWSERS``, default the core count), started lazily;
    each job has ``budget_s`` of wall time; ``chromium`` is the executable
    (``RECON_CHROMIUM``, default :data:`~recon.render.browser.CHROMIUM`)."""

    def __init__(
        self,
        size: int | None = None,
        *,
        budget_s: float = JOB_BUDGET_S,
        chromium: str | None = None,
    ) -> None:
        self.size = max(1, size or os.cpu_count() or 1)
        self.budget_s = budget_s
        self.chromium = chromium
        self._jobs: queue.Queue[_Job] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()

    def run(self, job: Callable[[Browser], T]) -> T:
        """Run ``job(browser)`` on a pool thread and return its result (or raise its error;
        :class:`PageError` when its page broke the browser twice)."""
        future: Future[T] = Future()
        with self._lock:
            if self._idle == 0 and len(self._threads) < self.size:
                self._start()
        self._jobs.put((job, future))
        return future.result()

    def _start(self) -> None:
        thread = threading.Thread(
            target=self._work, name=f"recon-browser-{len(self._threads)}", daemon=True
        )
        self._threads.append(thread)
        thread.start()

    def _work(self) -> None:
        worker = Worker(self.budget_s, self.chromium)
        try:
            while (item := self._next()) is not None:
                job, future = item
                try:
                    future.set_result(worker.run(job))
                except BaseException as err:  # handed to the caller, who re-raises it
                    future.set_exception(err)
        finally:
            worker.close()

    def _next(self) -> _Job:
        with self._lock:
            self._idle += 1
        item = self._jobs.get()
        with self._lock:
            self._idle -= 1
        return item

    def close(self) -> None:
        """Close every browser on its own thread; the pool can be used again afterwards."""
        threads, self._threads = self._threads, []
        for _ in threads:
            self._jobs.put(None)
        for thread in threads:
            thread.join(timeout=60)


class Worker:
    """One thread's browser: launched when a job needs it, checked before every job,
    relaunched when dead or hung; runs jobs under their budget (see the module docstring).
    Every method runs on the thread that owns it."""

    def __init__(self, budget_s: float = JOB_BUDGET_S, chromium: str | None = None) -> None:
        self.budget_s = budget_s
        self.chromium = chromium
        self.launches = 0
        self._stack: ExitStack | None = None
        self._chromium: Chromium | None = None
        self._cdp: CDPSession | None = None

    def run(self, job: Callable[[Browser], T]) -> T:
        reason = ""
        for _ in range(TRIES):
            lost, value = self._try(self.ready(), job)
            if lost is None:
                return value
            reason = lost
            self.close()  # the next try gets a fresh browser
        raise PageError(page_failure(reason))

    def ready(self) -> Chromium:
        """A healthy browser: this one, or a new one when it died or hangs."""
        if self._chromium is not None and not self._healthy():
            self.close()
        if self._chromium is None:
            self._launch()
        assert self._chromium is not None
        return self._chromium

    def close(self) -> None:
        stack, self._stack, self._chromium, self._cdp = self._stack, None, None, None
        if stack is not None:
            stack.close()

    def _launch(self) -> None:
        stack = ExitStack()
        try:
            chromium = stack.enter_context(launch(self.chromium))
            self._cdp = chromium.browser.new_browser_cdp_session()
        except BaseException:
            stack.close()
            raise
        self._stack, self._chromium = stack, chromium
        self.launches += 1

    def _healthy(self) -> bool:
        chromium, cdp = self._chromium, self._cdp
        if chromium is None or cdp is None or not chromium.browser.is_connected():
            return False
        try:
            with watchdog(HEALTH_LIMIT_S, chromium.kill):
                cdp.send("Browser.getVersion")
        except PlaywrightError:
            return False
        return chromium.browser.is_connected()

    def _try(self, chromium: Chromium, job: Callable[[Browser], T]) -> tuple[str | None, Any]:
        """``(None, result)``, or ``(why the job was lost, None)``; other errors raise."""
        overran = threading.Event()

        def kill() -> None:
            overran.set()
            chromium.kill()

        crashed, value = False, None
        try:
            with watchdog(self.budget_s, kill):
                value = job(chromium.browser)
        except PageError:  # the page's renderer crashed (recon.render.page.open_page)
            crashed = True
        except Exception:
            if self._lost(chromium, overran, crashed=False) is None:
                raise
        lost = self._lost(chromium, overran, crashed=crashed)
        return (lost, None) if lost is not None else (None, value)

    def _lost(self, chromium: Chromium, overran: threading.Event, *, crashed: bool) -> str | None:
        connected = chromium.browser.is_connected()
        return verdict(
            overran=overran.is_set(), connected=connected, crashed=crashed, budget_s=self.budget_s
        )
