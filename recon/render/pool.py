"""Browsers owned by worker threads: one browser per worker, reused across cells.

Playwright's sync API binds a browser to the thread that opened it, while doit may run
cells on several threads (``-P thread``) and runs teardowns on the main thread. So each
browser lives on a thread of this pool; callers hand it jobs and wait for the result.
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

from playwright.sync_api import Browser

from recon.render.browser import open_browser

T = TypeVar("T")
_Job = tuple[Callable[[Browser], Any], Future[Any]] | None


class BrowserPool:
    """Up to ``size`` browsers (``RECON_BROWSERS``, default the core count), started lazily."""

    def __init__(self, size: int | None = None) -> None:
        default = int(os.environ.get("RECON_BROWSERS") or os.cpu_count() or 1)
        self.size = max(1, size or default)
        self._jobs: queue.Queue[_Job] = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._lock = threading.Lock()

    def run(self, job: Callable[[Browser], T]) -> T:
        """Run ``job(browser)`` on a pool thread and return its result (or raise its error)."""
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
        try:
            with open_browser() as browser:
                self._serve(browser)
        except BaseException as err:  # the browser could not start: fail the job waiting for it
            with self._lock:
                self._threads.remove(threading.current_thread())
            item = self._jobs.get()
            if item is not None:
                item[1].set_exception(err)

    def _serve(self, browser: Browser) -> None:
        while True:
            with self._lock:
                self._idle += 1
            item = self._jobs.get()
            with self._lock:
                self._idle -= 1
            if item is None:
                return
            job, future = item
            try:
                future.set_result(job(browser))
            except BaseException as err:  # handed to the caller, who re-raises it
                future.set_exception(err)

    def close(self) -> None:
        """Close every browser on its own thread; the pool can be used again afterwards."""
        threads, self._threads = self._threads, []
        for _ in threads:
            self._jobs.put(None)
        for thread in threads:
            thread.join(timeout=60)
