"""Deterministic stills of one matrix point: screenshots, a DOM snapshot, console and network log.

The page (:mod:`recon.render.page`) is loaded, given :data:`ADVANCE_MS` of page time and
a stylesheet that collapses CSS animations, and settled until still
(:mod:`recon.render.settle`); then the point's contract steps run, each followed by
another :data:`ADVANCE_MS` and settling; then the stills, proven stable a frame apart
(:mod:`recon.render.stills`). What kept a capture from showing its point (a route the
build lacks, a step whose element never appeared, a page that never settled) is recorded
in :attr:`Capture.failure`, never raised; a page whose pixels never stopped changing is
recorded in :attr:`Capture.stability`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import Browser
from playwright.sync_api import Error as PlaywrightError

from recon.model.interaction import Step
from recon.render.page import (
    Session,
    Viewport,
    first_line,
    guard,
    load,
    ms_since,
    open_page,
    raise_if_broken,
)
from recon.render.serve import ORIGIN, NetworkEvent, Reader
from recon.render.session import HARNESS_LIMIT_S
from recon.render.snapshot import DOM_LIMIT, snapshot
from recon.render.steps import run_steps
from recon.render.stills import Stability, stable_stills, unproven_stills

__all__ = [
    "ORIGIN",
    "Capture",
    "NetworkEvent",
    "Reader",
    "Stability",
    "Viewport",
    "capture",
]

STEP_TIMEOUT_MS = 10_000
"""Per step on an element that exists; a missing one fails at once (``run_steps``)."""
STEP_SETTLE_MS = 2000
"""After each step: how long to wait for the requests it made to finish."""
BUSY_LIMIT_S = 1.0  # before the stills, a main thread busy this long is terminated


@dataclass(frozen=True)
class Capture:
    full_png: bytes
    viewport_png: bytes
    dom: list[dict[str, Any]]
    console: list[str]
    network: list[NetworkEvent]  # sorted and de-duplicated: arrival order and counts race
    timings: dict[str, float]  # wall ms, plus "settled" and "still" 1.0/0.0; never hashed
    stability: Stability  # the same pixels a frame apart, or unstable with the difference
    failure: str | None = None  # why this capture may not show the point it was asked for

    @property
    def status(self) -> str:
        """``"stable"`` or ``"unstable"`` (its pixels kept changing; see ``stability``)."""
        return self.stability.status


def capture(
    browser: Browser,
    read: Reader,
    route: str,
    viewport: Viewport,
    *,
    steps: Sequence[Step] = (),
    settle_ms: int = 5000,
    step_timeout_ms: int = STEP_TIMEOUT_MS,
    prove: bool = True,
) -> Capture:
    """Render ``route`` of the build in a fresh context, apply ``steps``, take its stills.

    ``timings`` (wall ms) name the phases: ``open`` (context and page), ``goto`` (commit
    and load event), ``settle`` (quiet network, clock advance, fonts and images, settling
    until still), ``steps``, ``screenshots`` (the stills and their stability proof),
    ``snapshot``; closing the context comes after the capture is built.

    ``prove=False`` skips the stability proof (one still of each kind, ``stability.pairs``
    0): only to measure what the proof costs (``bench/render_capture.py``).
    """
    start = time.monotonic()
    with open_page(browser, read, viewport) as session:
        opened = ms_since(start)
        timings = {"open": opened, **load(session, route, settle_ms)}
        if steps and session.status == 200:
            start = time.monotonic()
            failed = run_steps(
                session, steps, route=route, timeout_ms=step_timeout_ms, settle_ms=STEP_SETTLE_MS
            )
            session.failures.extend([failed] if failed else [])
            timings["steps"] = ms_since(start)
        start = time.monotonic()
        _unstick(session)
        full, shown, stability = stable_stills(session) if prove else unproven_stills(session)
        timings["screenshots"] = ms_since(start)
        start = time.monotonic()
        dom = _snapshot(session)
        timings["snapshot"] = ms_since(start)
        raise_if_broken(session)
        return Capture(
            full_png=full,
            viewport_png=shown,
            dom=dom,
            console=list(session.console),
            network=sorted(set(session.network), key=lambda e: (e.url, e.outcome)),
            timings=timings,
            stability=stability,
            failure="; ".join(session.failures) or None,
        )


def _unstick(session: Session) -> None:
    """Terminate page script that keeps the main thread busy (it would stall the stills)."""
    try:
        with guard(session, BUSY_LIMIT_S):
            session.world.evaluate("0")
    except PlaywrightError:
        pass  # terminated by the guard: recorded there


def _snapshot(session: Session) -> list[dict[str, Any]]:
    try:
        with guard(session, HARNESS_LIMIT_S):
            dom, failure = snapshot(session.cdp, session.world.evaluate, DOM_LIMIT)
        session.failures.extend([failure] if failure else [])
        return dom
    except PlaywrightError as exc:
        session.failures.append(f"DOM snapshot failed: {first_line(exc)}")
        return []
