"""The one step interpreter: contract states, motion transitions and sealed workflows.

Steps are :class:`recon.model.interaction.Step`. Locators are resolved by the one locator
engine (:mod:`recon.render.locate`: chromium's computed roles and names, labels, texts,
test ids, titles, placeholders, alt texts, css), out of page script's reach; the action
itself is playwright's, on the one element found, with its actionability checks
(visible, stable, enabled). A failed step stops the sequence and is returned as text,
never raised. Where the two former interpreters differed, this one chose:

- **A locator names exactly one element**, for every action, ``wait_for`` included:
  names and texts match exactly, after whitespace normalisation; none or several fail
  the step, naming the matches. Acting on "the first" of several would make a step's
  effect depend on document order the contract does not describe; ``recon validate``
  reports the ambiguity on the reference instead. (Assertions say which match they
  read with ``match``; steps act on one element.)
- **scroll by pixels is ``window.scrollBy`` with ``behavior: 'instant'``**, run in the
  harness's isolated world: the same offset every run, whatever element lies under the
  mouse, with no smooth-scroll animation in flight when the page settles, and page
  script cannot redefine it. A mouse wheel would scroll whatever scroller is under the
  pointer and may animate. ``scroll`` with a locator scrolls its element into view.
- ``press`` without a locator sends the key to the focused element.
- ``goto`` and ``reload`` load a route as the page was loaded first (its stills
  preparation too), then the page settles as after a load.

The page has settled before the steps run, so a locator that matches nothing fails at
once rather than after the timeout; ``wait_for`` alone polls until its element is
visible. After each step the page gets page time and settles
(:func:`recon.render.settle.settle_step`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator as PageLocator
from playwright.sync_api import Page

from recon.model.interaction import Locator, Offset, Step
from recon.render.locate import VISIBLE_JS, Found, Locate, shown
from recon.render.page import Session, load, settle_step

_Act = Callable[[Session, Locate, Step, int], None]
POLL_MS = 50
LOAD_MS = 5000
"""How long a ``goto`` or ``reload`` may take to load and settle (as a first load)."""


class NoTarget(Exception):
    """A step's locator names no element, or more than one: the step fails with this text."""


def run_steps(
    session: Session,
    steps: Sequence[Step],
    *,
    route: str,
    timeout_ms: int,
    settle_ms: int,
    after_last: bool = True,
) -> str | None:
    """Apply ``steps`` in order on ``route``'s page, settling after each (but the last
    unless ``after_last``); return the first failure as ``steps[i] <step>: <why>``."""
    for index, step in enumerate(steps):
        settle = after_last or index < len(steps) - 1
        failed = run_step(
            session, step, route=route, timeout_ms=timeout_ms, settle_ms=settle_ms, settle=settle
        )
        if failed is not None:
            return f"steps[{index}] {describe(step)}: {failed}"
    return None


def run_step(
    session: Session,
    step: Step,
    *,
    route: str,
    timeout_ms: int,
    settle_ms: int,
    settle: bool = True,
    load_ms: int = LOAD_MS,
) -> str | None:
    """Apply one step and (``settle``) let the page settle within ``settle_ms``; a
    ``goto`` or ``reload`` loads within ``load_ms``. Why it failed, or None."""
    try:
        if step.action in ("goto", "reload"):
            load(session, step.goto or route, load_ms, still=not session.motion)
            return None
        # Each action releases its matches before it acts: a handler that keeps the page's
        # main thread busy would block any later DevTools call until the guard ends it.
        _ACTIONS[step.action](session, Locate(session.cdp, session.world), step, timeout_ms)
    except (PlaywrightError, NoTarget) as exc:
        return reason(exc)
    if settle:
        settle_step(session, settle_ms)
    return None


def reason(exc: Exception) -> str:
    if isinstance(exc, PlaywrightError):
        return exc.message.splitlines()[0] if exc.message else str(exc)
    return str(exc)


def describe(step: Step) -> str:
    """``click {role: button, name: Menu}``: how a failure names its step."""
    dumped = step.dump()
    extras = ", ".join(f"{k}: {v}" for k, v in dumped.items() if k != step.action)
    target = dumped[step.action]
    if isinstance(target, dict):
        where = " {" + ", ".join(f"{k}: {v}" for k, v in target.items()) + "}"
    else:
        where = "" if target is None else f" {target}"
    return f"{step.action}{where}" + (f" ({extras})" if extras else "")


def target(page: Page, locate: Locate, spec: Locator) -> PageLocator:
    """A playwright locator of the one element ``spec`` matches (raises :class:`NoTarget`)."""
    found = locate.find(spec)
    try:
        return page.locator(only(found, spec))
    finally:
        locate.release()


def only(found: Found, spec: Locator) -> str:
    """The CSS path of the single match (raises :class:`NoTarget` for none or several)."""
    if found.count == 0:
        raise NoTarget("no matching element")
    if found.count > 1:
        named = "; ".join(found.describe())
        raise NoTarget(
            f"strict mode violation: {shown(spec)} matches {found.count} elements ({named})"
        )
    path = found.path(0)
    if path is None:
        raise NoTarget("the element is inside a shadow root, which steps cannot reach")
    return path


def wait_visible(page: Page, locate: Locate, spec: Locator, timeout_ms: int) -> None:
    """Poll until ``spec`` matches one visible element (raises :class:`NoTarget` after
    ``timeout_ms``)."""
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        found = locate.find(spec)
        try:
            if found.count == 1 and found.read(VISIBLE_JS, [0])[0]:
                return
            if found.count > 1 or time.monotonic() >= deadline:
                only(found, spec)
                raise NoTarget(f"not visible within {timeout_ms} ms")
        finally:
            locate.release()
        page.wait_for_timeout(POLL_MS)


def _locator(step: Step) -> Locator:
    found = step.locator
    assert found is not None, "the step model requires a locator here"
    return found


def _click(session: Session, locate: Locate, step: Step, timeout_ms: int) -> None:
    target(session.page, locate, _locator(step)).click(timeout=timeout_ms)


def _fill(session: Session, locate: Locate, step: Step, timeout_ms: int) -> None:
    target(session.page, locate, _locator(step)).fill(step.value or "", timeout=timeout_ms)


def _press(session: Session, locate: Locate, step: Step, timeout_ms: int) -> None:
    key = step.key or ""
    if step.locator is not None:
        target(session.page, locate, step.locator).press(key, timeout=timeout_ms)
    else:
        session.page.keyboard.press(key)


def _hover(session: Session, locate: Locate, step: Step, timeout_ms: int) -> None:
    target(session.page, locate, _locator(step)).hover(timeout=timeout_ms)


def _scroll(session: Session, locate: Locate, step: Step, timeout_ms: int) -> None:
    by = step.target
    if isinstance(by, Offset):  # instantly, with the isolated world's own scrollBy
        session.world.evaluate(f"scrollBy({{left: {by.x}, top: {by.y}, behavior: 'instant'}})")
    else:
        target(session.page, locate, _locator(step)).scroll_into_view_if_needed(timeout=timeout_ms)


def _wait_for(session: Session, locate: Locate, step: Step, timeout_ms: int) -> None:
    wait_visible(session.page, locate, _locator(step), timeout_ms)


_ACTIONS: dict[str, _Act] = {
    "click": _click,
    "fill": _fill,
    "press": _press,
    "hover": _hover,
    "scroll": _scroll,
    "wait_for": _wait_for,
}
