"""Page time, and settling a page until it is still.

Page script runs on playwright's fake clock (:mod:`recon.render.page` pauses it at
``FROZEN_TIME``): its timers, ``requestAnimationFrame``, ``Date`` and ``performance.now``
move only when the harness advances page time, by a fixed amount, in one go. What the
fake clock does not drive happens in real time in chromium: responses to the page's
requests, font loads and image decodes, ``IntersectionObserver`` and ``ResizeObserver``
deliveries (they come with rendering frames), CSS transitions. So between two advances
of page time the harness *drains* the page (:data:`DRAIN_JS`, in the isolated world,
where the timers and frames are chromium's own): the network is quiet, fonts are loaded,
images decoded, finite animations and transitions finished (their ``transitionend`` and
``animationend`` fire), and two real rendering frames have passed, so that every
observer callback due has run. Whatever those callbacks schedule on the fake clock runs
at the next advance, at the same page time in every run.

This is virtual time, made of playwright's clock and a drain: chromium's own
(``Emulation.setVirtualTimePolicy``) pauses rendering frames with page time, and
playwright's actionability checks wait for frames, so every click of a state's steps
times out under it.

:func:`settle` advances page time in :data:`STEP_MS` steps until :data:`QUIET_STEPS`
steps in a row changed nothing (no DOM mutation, the same layout, nothing to finish), or
until :data:`MAX_STEPS` steps. It reports whether the page went still; whether a still is
stable is proven on the pixels (:mod:`recon.render.stills`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from playwright.sync_api import Error as PlaywrightError

from recon.render.session import Session, first_line, guard

ADVANCE_MS = 1000  # page time given at once after load and after each step
STEP_MS = 250  # then page time advances by this much until the page is still
QUIET_STEPS = 2  # ... for this many steps in a row
MAX_STEPS = 16  # ... or this many steps (4 s of page time): a page that never goes still
SETTLE_LIMIT_S = 10.0  # real seconds settling may take, at most (normally well under 1)
FRAME_MS = 16  # one rendering frame of page time
DRAIN_LIMIT_MS = 2000  # real ms a drain waits for fonts, decodes and frames, at most
DRAIN_FLOOR_MS = 100  # ... and at least, even past the caller's deadline
QUIET_MS = 200  # no new request for this long: the page has made the requests it will
GRACE_MS = 50  # for requests a script has issued but chromium has not yet routed


LATE = f"the page did not go still within {SETTLE_LIMIT_S:g} s of settling"


@dataclass(frozen=True)
class Drained:
    """What one drain saw: changes since the previous drain and the layout it left."""

    mutations: int
    layout: int  # a hash of every element's box, the scroll position and the page size
    finished: int  # finite animations and transitions it finished
    complete: bool  # fonts loaded and images decoded within DRAIN_LIMIT_MS

    @property
    def changed(self) -> bool:
        return self.mutations > 0 or self.finished > 0


def settle(session: Session, limit_s: float = SETTLE_LIMIT_S) -> str:
    """Advance page time in steps until the page is still.

    ``"still"``: :data:`QUIET_STEPS` steps in a row changed nothing. ``"moving"``: it was
    still changing after :data:`MAX_STEPS` steps (a bound in page time, so the same in
    every run; whether its pixels move is for :mod:`recon.render.stills` to tell).
    ``"late"``: ``limit_s`` real seconds passed first (chromium ran the page's frames too
    slowly), or page script kept the harness from draining it.
    """
    deadline = time.monotonic() + limit_s
    previous: Drained | None = None
    quiet = 0
    for step in range(MAX_STEPS + 1):
        if step:
            advance_clock(session, STEP_MS)
        wait_quiet(session, deadline, grace_ms=0)
        requests = session.last_request
        drained = drain(session, deadline)
        if drained is None:
            return "late"
        unchanged = previous is not None and drained.layout == previous.layout
        still = unchanged and not drained.changed and session.last_request == requests
        quiet = quiet + 1 if still and drained.complete else 0
        if quiet >= QUIET_STEPS:
            return "still"
        if time.monotonic() >= deadline:
            return "late"
        previous = drained
    return "moving"


def drain(session: Session, deadline: float) -> Drained | None:
    """Let chromium deliver what real time owes the page (see the module doc); None when
    page script kept the isolated world from answering (terminated by the guard)."""
    try:
        with guard(session):
            # Motion pages keep their animations for the frames to step through.
            finish = "false" if session.motion else "true"
            left_ms = int((deadline - time.monotonic()) * 1000)
            limit = min(DRAIN_LIMIT_MS, max(DRAIN_FLOOR_MS, left_ms))
            raw: dict[str, Any] = session.world.evaluate(f"({DRAIN_JS})({limit}, {finish})")
    except PlaywrightError as exc:
        session.failures.append(f"settling failed: {first_line(exc)}")
        return None
    return Drained(
        mutations=int(raw["mutations"]),
        layout=int(raw["layout"]),
        finished=int(raw["finished"]),
        complete=bool(raw["complete"]),
    )


def advance_clock(session: Session, ms: int) -> None:
    """Fire the page's timers and frames for exactly ``ms`` of fake time."""
    try:
        with guard(session):
            session.page.clock.run_for(ms)
    except PlaywrightError as exc:  # the first error thrown by a page timer
        session.console.append(first_line(exc).removeprefix("Clock.run_for: "))


def settle_step(session: Session, timeout_ms: int) -> None:
    """After a step: ADVANCE_MS of page time, the requests it made, then settle."""
    advance_clock(session, ADVANCE_MS)
    wait_quiet(session, time.monotonic() + timeout_ms / 1000)
    if settle(session) == "late":
        session.failures.append(LATE)


def frame_apart(session: Session) -> None:
    """One rendering frame of page time, then a drain: what "a frame apart" means."""
    advance_clock(session, FRAME_MS)
    drain(session, time.monotonic() + DRAIN_LIMIT_MS / 1000)


def wait_quiet(session: Session, deadline: float, grace_ms: int = GRACE_MS) -> bool:
    """Wait until ``grace_ms`` have passed and no request has come for QUIET_MS (True), or
    until ``deadline`` (False). Every request of the page passes through ``serve``, so
    this sees them all; it replaces playwright's "networkidle" (a fixed 500 ms)."""
    grace_end = time.monotonic() + grace_ms / 1000
    while True:
        quiet_at = max(grace_end, session.last_request + QUIET_MS / 1000)
        now = time.monotonic()
        if now >= quiet_at:
            return True
        if now >= deadline:
            return False
        session.page.wait_for_timeout(max(1.0, (min(quiet_at, deadline) - now) * 1000))


# Runs in the isolated world: its timers and frames are chromium's real ones, not the
# page's fake clock; its MutationObserver and helpers can't be touched by page script.
DRAIN_JS = """async (limitMs, finish) => {
  const start = performance.now();
  const left = () => Math.max(0, limitMs - (performance.now() - start));
  let complete = true;
  const bounded = (promise) => new Promise((resolve) => {
    const timer = setTimeout(() => { complete = false; resolve(); }, left());
    const done = () => { clearTimeout(timer); resolve(); };
    promise.then(done, done);
  });
  const watch = globalThis.reconWatch || (globalThis.reconWatch = {count: 0, observer: null});
  if (!watch.observer) {
    watch.observer = new MutationObserver((records) => { watch.count += records.length; });
    watch.observer.observe(document, {subtree: true, childList: true, attributes: true,
      characterData: true});
  }
  await bounded(document.fonts.ready);
  const decodes = Array.from(document.images)
    .filter((image) => image.complete && image.naturalWidth > 0)
    .map((image) => image.decode().catch(() => null));
  await bounded(Promise.all(decodes));
  let finished = 0;
  for (const animation of finish ? document.getAnimations() : []) {
    const timing = animation.effect ? animation.effect.getComputedTiming() : null;
    if (animation.playState === 'running' && timing && Number.isFinite(timing.endTime)) {
      animation.finish();
      finished++;
    }
  }
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
  await bounded(frame());
  await bounded(frame());
  const mutations = watch.count + watch.observer.takeRecords().length;
  watch.count = 0;
  let hash = 0x811c9dc5;
  const mix = (value) => { hash = Math.imul(hash ^ Math.round(value * 64), 16777619); };
  for (const element of document.querySelectorAll('*')) {
    const box = element.getBoundingClientRect();
    mix(box.x); mix(box.y); mix(box.width); mix(box.height);
  }
  const root = document.documentElement;
  mix(scrollX); mix(scrollY); mix(root ? root.scrollWidth : 0); mix(root ? root.scrollHeight : 0);
  complete = complete && document.fonts.status === 'loaded';
  return {mutations, layout: hash >>> 0, finished, complete};
}"""
