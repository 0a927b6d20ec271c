"""Applying a contract state's steps.

Locators are resolved by the one locator engine (:mod:`recon.render.locate`: chromium's
computed roles and names, labels, texts, test ids), out of page script's reach; the
action itself is playwright's, on the one element found, with its actionability checks
(visible, stable, enabled). A locator must name exactly one element; names and texts
match exactly, after whitespace normalisation. An ambiguous or missing element, or one
that does not become actionable within the step timeout, fails the step: a failed step
stops the sequence and is returned as text, never raised. The page has settled before
the steps run, so a locator that matches nothing fails at once rather than after the
timeout; ``wait_for`` alone polls until its element is visible.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator as PageLocator
from playwright.sync_api import Page

from recon.model.contract import Locator, Offset, Step
from recon.render.locate import VISIBLE_JS, Found, Locate, Spec, shown
from recon.render.snapshot import IsolatedWorld

Evaluate = Callable[[str], Any]  # runs a script in the harness's isolated world
_Act = Callable[[Page, Locate, Evaluate, Step, int], None]
POLL_MS = 50


class NoTarget(Exception):
    """A step's locator names no element, or more than one: the step fails with this text."""


def run_steps(
    page: Page,
    evaluate: Evaluate,
    steps: Sequence[Step],
    timeout_ms: int,
    after_each: Callable[[], None],
    *,
    after_last: bool = True,
) -> str | None:
    """Apply ``steps`` in order, calling ``after_each`` after each (but the last unless
    ``after_last``); return the first failure."""
    with locate_in(page) as locate:
        for index, step in enumerate(steps):
            try:
                _ACTIONS[step.action](page, locate, evaluate, step, timeout_ms)
            except (PlaywrightError, NoTarget) as exc:
                return f"steps[{index}] {describe(step)}: {reason(exc)}"
            if after_last or index < len(steps) - 1:
                after_each()
    return None


@contextmanager
def locate_in(page: Page) -> Iterator[Locate]:
    """The locator engine on a DevTools session of its own for ``page``. The session is
    left to close with the page: detaching waits for the page's main thread, which a
    step's handler may keep busy until the caller's guard terminates it."""
    cdp = page.context.new_cdp_session(page)
    yield Locate(cdp, IsolatedWorld(cdp))


def reason(exc: Exception) -> str:
    if isinstance(exc, PlaywrightError):
        return exc.message.splitlines()[0] if exc.message else str(exc)
    return str(exc)


def describe(step: Step) -> str:
    """``click {role: button, name: Menu}``: how a failure names its step."""
    shown_ = ", ".join(f"{k}: {v}" for k, v in step.dump().items() if k != step.action)
    target = step.dump()[step.action]
    where = "" if target is None else " {" + ", ".join(f"{k}: {v}" for k, v in target.items()) + "}"
    return f"{step.action}{where}" + (f" ({shown_})" if shown_ else "")


def target(page: Page, locate: Locate, spec: Spec) -> PageLocator:
    """A playwright locator of the one element ``spec`` matches (raises :class:`NoTarget`)."""
    found = locate.find(spec)
    try:
        return page.locator(only(found, spec))
    finally:
        locate.release()


def only(found: Found, spec: Spec) -> str:
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


def wait_visible(page: Page, locate: Locate, spec: Spec, timeout_ms: int) -> None:
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
    target_ = step.target
    assert isinstance(target_, Locator), "the contract model requires a locator here"
    return target_


def _click(page: Page, locate: Locate, _evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    target(page, locate, _locator(step)).click(timeout=timeout_ms)


def _fill(page: Page, locate: Locate, _evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    target(page, locate, _locator(step)).fill(step.value or "", timeout=timeout_ms)


def _press(page: Page, locate: Locate, _evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    key = step.key or ""
    target_ = step.target
    if isinstance(target_, Locator) and target_.given():
        target(page, locate, target_).press(key, timeout=timeout_ms)
    else:
        page.keyboard.press(key)


def _hover(page: Page, locate: Locate, _evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    target(page, locate, _locator(step)).hover(timeout=timeout_ms)


def _scroll(page: Page, locate: Locate, evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    target_ = step.target
    if isinstance(target_, Offset):  # instantly, with the isolated world's own scrollBy
        evaluate(f"scrollBy({{left: {target_.x}, top: {target_.y}, behavior: 'instant'}})")
    else:
        target(page, locate, _locator(step)).scroll_into_view_if_needed(timeout=timeout_ms)


def _wait_for(page: Page, locate: Locate, _evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    wait_visible(page, locate, _locator(step), timeout_ms)


_ACTIONS: dict[str, _Act] = {
    "click": _click,
    "fill": _fill,
    "press": _press,
    "hover": _hover,
    "scroll": _scroll,
    "wait_for": _wait_for,
}
