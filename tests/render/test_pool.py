"""The browser pool: a page that breaks its browser costs only its own job (issue 27).

The pure verdict first, then real chromium: a browser killed or hung between two jobs is
relaunched and the job succeeds; a job past its budget, or whose page crashes its renderer,
is retried once on a fresh browser and then fails as the page's, with the same text every
time; the pool serves the next job as if nothing happened."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest
from playwright.sync_api import Browser

from recon.errors import PageError
from recon.render import BrowserPool, Capture, Reader, Viewport
from recon.render import pool as pool_module
from recon.render.browser import chromium_path
from recon.render.capture import capture
from recon.render.page import load, open_page
from recon.render.pool import EXITED, OVERRAN, Worker, page_failure, verdict
from recon.render.session import CRASHED

T = TypeVar("T")
VIEWPORT = Viewport("small", 640, 480)
BUDGET_S = 300.0  # the pool's budget in these tests: no loaded machine exhausts it honestly
SHORT_S = 5.0  # the budget of the job that spins for ever (it overruns any budget)
browser = pytest.mark.browser
needs_chromium = pytest.mark.skipif(
    not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
)

PAGES: dict[str, bytes] = {
    "index.html": b"<!doctype html><p>honest</p>",
    # Grows its JavaScript heap until the renderer dies (--max-old-space-size, RLIMIT_DATA).
    "heap.html": b"<p>heap</p><script>const k = []; for (;;) k.push(new Array(1e6).fill(1))"
    b"</script>",
    # Spins only when called: page script no guard bounds (the job calls it unguarded).
    "spin.html": b"<p>spin</p><script>function spin() { for (;;) {} }</script>",
}


def read(path: str) -> bytes | None:
    return PAGES.get(path)


def honest(browser: Browser, reader: Reader = read) -> Capture:
    return capture(browser, reader, "/", VIEWPORT)


def spin(browser: Browser) -> None:
    with open_page(browser, read, VIEWPORT) as session:
        load(session, "/spin.html", 5000)
        session.page.evaluate("spin()")  # blocks until the browser is killed


@pytest.fixture
def pool() -> Iterator[BrowserPool]:
    pool = BrowserPool(1, budget_s=BUDGET_S)
    yield pool
    pool.close()


def on_a_thread(work: Callable[[], T]) -> T:
    """Run ``work`` on a fresh thread: a :class:`Worker` owns playwright on its thread."""
    with ThreadPoolExecutor(1) as executor:
        return executor.submit(work).result()


# --- the verdict (pure) ----------------------------------------------------------------


def test_a_job_is_lost_when_it_overran_its_browser_exited_or_its_renderer_crashed() -> None:
    def lost(overran: bool = False, connected: bool = True, crashed: bool = False) -> str | None:
        return verdict(overran=overran, connected=connected, crashed=crashed, budget_s=90)

    assert lost() is None
    assert lost(overran=True, connected=False) == OVERRAN.format(budget=90)
    assert lost(connected=False, crashed=True) == EXITED
    assert lost(crashed=True) == CRASHED
    assert page_failure(CRASHED) == f"{CRASHED} (2 tries, each on a fresh browser)"


# --- real chromium -----------------------------------------------------------------------


@browser
@needs_chromium
@pytest.mark.parametrize("how", ["killed", "hung"])
def test_a_browser_killed_or_hung_between_two_jobs_is_relaunched_and_the_job_succeeds(
    how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pool_module, "HEALTH_LIMIT_S", 2.0)  # a stopped browser never answers

    def between_jobs() -> tuple[Capture, Capture, int]:
        worker = Worker(BUDGET_S)
        try:
            first = worker.run(honest)
            pid = worker.ready().pid
            os.kill(pid, signal.SIGKILL if how == "killed" else signal.SIGSTOP)
            second = worker.run(honest)
            assert worker.ready().pid != pid
            return first, second, worker.launches
        finally:
            worker.close()

    first, second, launches = on_a_thread(between_jobs)
    assert launches == 2
    assert second.failure is None and second.full_png == first.full_png


@browser
@needs_chromium
def test_a_job_past_its_budget_fails_as_its_page_and_the_next_job_is_fine() -> None:
    def past_budget() -> tuple[str, Capture, int]:
        worker = Worker(SHORT_S)
        try:
            with pytest.raises(PageError) as raised:
                worker.run(spin)
            worker.budget_s = BUDGET_S  # the honest job after it: no loaded machine's worry
            return str(raised.value), worker.run(honest), worker.launches
        finally:
            worker.close()

    reason, after, launches = on_a_thread(past_budget)
    assert reason == page_failure(OVERRAN.format(budget=SHORT_S))
    assert launches == 3  # the first, the fresh one for the second try, and the next job's
    assert after.failure is None and any(e["text"] == "honest" for e in after.dom)


@browser
@needs_chromium
def test_a_page_that_crashes_its_renderer_fails_the_same_way_every_time(
    pool: BrowserPool,
) -> None:
    def crash(browser: Browser) -> Capture:
        return capture(browser, read, "/heap.html", VIEWPORT)

    reasons = []
    for _ in range(2):
        with pytest.raises(PageError) as raised:
            pool.run(crash)
        reasons.append(str(raised.value))
    assert reasons == [page_failure(CRASHED)] * 2
    assert pool.run(honest).failure is None


@browser
@needs_chromium
def test_a_harness_error_in_a_job_on_a_healthy_browser_is_raised_not_retried(
    pool: BrowserPool,
) -> None:
    calls = []

    def broken(_browser: Browser) -> None:
        calls.append(1)
        raise RuntimeError("a harness bug")

    with pytest.raises(RuntimeError, match="a harness bug"):
        pool.run(broken)
    assert calls == [1]
