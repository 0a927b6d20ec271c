"""Applying a contract state's steps with playwright locators.

Locators are resolved by playwright (accessible role and name, label, text, test id)
in its own isolated world, so page script can't patch the lookup. A locator must name
exactly one element (playwright's strict mode); names and texts match exactly, after
whitespace normalisation. An ambiguous or missing element, or one that does not
become actionable within the step timeout, fails the step: a failed step stops the
sequence and is returned as text, never raised. The page has settled before the steps
run, so a locator that matches nothing fails at once rather than after the timeout.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Locator as PageLocator
from playwright.sync_api import Page

from recon.model.contract import Locator, Offset, Step

Evaluate = Callable[[str], Any]  # runs a script in the harness's isolated world
_Act = Callable[[Page, Evaluate, Step, int], None]


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
    for index, step in enumerate(steps):
        target = step.target
        try:
            if isinstance(target, Locator) and target.given() and locate(page, target).count() == 0:
                return f"steps[{index}] {describe(step)}: no matching element"
            _ACTIONS[step.action](page, evaluate, step, timeout_ms)
        except PlaywrightError as exc:
            reason = exc.message.splitlines()[0] if exc.message else str(exc)
            return f"steps[{index}] {describe(step)}: {reason}"
        if after_last or index < len(steps) - 1:
            after_each()
    return None


def describe(step: Step) -> str:
    """``click {role: button, name: Menu}``: how a failure names its step."""
    shown = ", ".join(f"{k}: {v}" for k, v in step.dump().items() if k != step.action)
    target = step.dump()[step.action]
    where = "" if target is None else " {" + ", ".join(f"{k}: {v}" for k, v in target.items()) + "}"
    return f"{step.action}{where}" + (f" ({shown})" if shown else "")


def locate(page: Page, spec: Locator) -> PageLocator:
    if spec.role is not None:
        return page.get_by_role(cast(Any, spec.role), name=spec.name, exact=spec.name is not None)
    if spec.label is not None:
        return page.get_by_label(spec.label, exact=True)
    if spec.text is not None:
        return page.get_by_text(spec.text, exact=True)
    if spec.test_id is not None:
        return page.get_by_test_id(spec.test_id)
    raise ValueError(f"empty locator {spec!r}")  # the contract model refuses these


def _locator(step: Step) -> Locator:
    target = step.target
    assert isinstance(target, Locator), "the contract model requires a locator here"
    return target


def _click(page: Page, _evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    locate(page, _locator(step)).click(timeout=timeout_ms)


def _fill(page: Page, _evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    locate(page, _locator(step)).fill(step.value or "", timeout=timeout_ms)


def _press(page: Page, _evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    key = step.key or ""
    target = step.target
    if isinstance(target, Locator) and target.given():
        locate(page, target).press(key, timeout=timeout_ms)
    else:
        page.keyboard.press(key)


def _hover(page: Page, _evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    locate(page, _locator(step)).hover(timeout=timeout_ms)


def _scroll(page: Page, evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    target = step.target
    if isinstance(target, Offset):  # instantly, with the isolated world's own scrollBy
        evaluate(f"scrollBy({{left: {target.x}, top: {target.y}, behavior: 'instant'}})")
    else:
        locate(page, _locator(step)).scroll_into_view_if_needed(timeout=timeout_ms)


def _wait_for(page: Page, _evaluate: Evaluate, step: Step, timeout_ms: int) -> None:
    locate(page, _locator(step)).wait_for(state="visible", timeout=timeout_ms)


_ACTIONS: dict[str, _Act] = {
    "click": _click,
    "fill": _fill,
    "press": _press,
    "hover": _hover,
    "scroll": _scroll,
    "wait_for": _wait_for,
}
