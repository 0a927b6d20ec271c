"""Sealed checks, evaluated from the playwright side: assertions and workflows.

Elements are found with playwright locators (accessible role and name, label, text, test
id, css), which playwright resolves in its own isolated world; values are read by
playwright too (inner text, attributes, input values, bounding boxes). The one reading
that needs a script, a computed CSS property, runs in the harness's isolated world
(:class:`recon.render.snapshot.IsolatedWorld`) on the element found at the centre of the
locator's box. No check definition is ever injected into the page, and a page that
overrides DOM APIs (``document.querySelector``, ``getBoundingClientRect``,
``getComputedStyle``, ``fetch``...) cannot change an outcome. A check that fails or
times out is a failed result, never an exception.

A workflow replays its steps in one page; at each checkpoint its assertions are
evaluated and a viewport screenshot is kept; a ``preserve`` checkpoint is then reloaded
(or navigated to ``navigate_to``) and evaluated again. Rows are keyed by
:func:`recon.grade.workflow.key`. A failed step ends the workflow: later checkpoints get
no rows (the grade counts them as not reached).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from playwright.sync_api import Browser, Locator, Page
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from recon.model.grading import Assertion, Checkpoint, Step, Workflow, checkpoint_key
from recon.model.grading import Locator as Spec
from recon.render.page import (
    Reader,
    Session,
    Viewport,
    first_line,
    guard,
    load,
    open_page,
    settle_step,
)
from recon.render.steps import locate as locate_public

SETTLE_MS = 5000
TIMEOUT_MS = 10_000
"""Per action or reading on an element that exists. Generous on purpose: a missing element
fails at once (the page has settled), so the timeout only guards a busy machine."""


@dataclass(frozen=True)
class CheckResult:
    id: str
    passed: bool
    observed: str

    def row(self) -> dict[str, Any]:
        return {"id": self.id, "passed": self.passed, "observed": self.observed}


@dataclass
class WorkflowRun:
    """Rows per checkpoint key, the viewport PNG at each checkpoint, and what went wrong."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    screenshots: dict[str, bytes] = field(default_factory=dict)
    failure: str | None = None
    page_failures: list[str] = field(default_factory=list)


def run_checks(
    browser: Browser,
    read: Reader,
    route: str,
    viewport: Viewport,
    assertions: Sequence[Assertion],
    *,
    settle_ms: int = SETTLE_MS,
    timeout_ms: int = TIMEOUT_MS,
) -> list[CheckResult]:
    """Load ``route`` as :func:`recon.render.capture` does, then evaluate each assertion."""
    with open_page(browser, read, viewport) as session:
        load(session, route, settle_ms)
        return [check(session, a, timeout_ms) for a in assertions]


def run_workflow(
    browser: Browser,
    read: Reader,
    workflow: Workflow,
    viewport: Viewport,
    *,
    settle_ms: int = SETTLE_MS,
    timeout_ms: int = TIMEOUT_MS,
) -> WorkflowRun:
    run = WorkflowRun()
    with open_page(browser, read, viewport) as session:
        load(session, workflow.route, settle_ms)
        for index, item in enumerate(workflow.steps):
            if isinstance(item, Checkpoint):
                _checkpoint(session, workflow, item, run, settle_ms, timeout_ms)
                continue
            problem = _step(session, item, workflow.route, settle_ms, timeout_ms)
            if problem is not None:
                run.failure = f"steps[{index}] {item.action}: {problem}"
                break
        run.page_failures = list(session.failures)
    return run


def _checkpoint(
    session: Session,
    workflow: Workflow,
    cp: Checkpoint,
    run: WorkflowRun,
    settle_ms: int,
    timeout_ms: int,
) -> None:
    here = checkpoint_key(workflow.id, cp.id)
    run.rows[here] = [check(session, a, timeout_ms).row() for a in cp.assertions]
    run.screenshots[here] = _screenshot(session)
    if cp.preserve is None:
        return
    route = workflow.route if cp.preserve == "reload" else str(cp.navigate_to)
    load(session, route, settle_ms)
    again = checkpoint_key(workflow.id, cp.id, preserved=True)
    run.rows[again] = [check(session, a, timeout_ms).row() for a in cp.assertions]


def _screenshot(session: Session) -> bytes:
    try:
        with guard(session):
            return session.page.screenshot(animations="disabled", caret="hide")
    except PlaywrightError as exc:
        session.failures.append(f"checkpoint screenshot failed: {first_line(exc)}")
        return b""


def _step(session: Session, step: Step, route: str, settle_ms: int, timeout_ms: int) -> str | None:
    """Apply one workflow step and let the page settle; the failure, if any, as text."""
    page = session.page
    try:
        if step.action == "goto":
            load(session, str(step.value), settle_ms)
            return None
        if step.action == "reload":
            load(session, route, settle_ms)
            return None
        if step.locator is not None and locate(page, step.locator).count() == 0:
            return "no matching element"
        _ACTIONS[step.action](page, step, timeout_ms)
    except PlaywrightError as exc:
        return first_line(exc)
    settle_step(session, timeout_ms)
    return None


def _click(page: Page, step: Step, timeout_ms: int) -> None:
    locate(page, _spec(step)).click(timeout=timeout_ms)


def _fill(page: Page, step: Step, timeout_ms: int) -> None:
    locate(page, _spec(step)).fill(step.value or "", timeout=timeout_ms)


def _press(page: Page, step: Step, timeout_ms: int) -> None:
    if step.locator is not None:
        locate(page, step.locator).press(step.value or "", timeout=timeout_ms)
    else:
        page.keyboard.press(step.value or "")


def _hover(page: Page, step: Step, timeout_ms: int) -> None:
    locate(page, _spec(step)).hover(timeout=timeout_ms)


def _scroll(page: Page, step: Step, timeout_ms: int) -> None:
    if step.locator is not None:
        locate(page, step.locator).scroll_into_view_if_needed(timeout=timeout_ms)
    else:
        page.mouse.wheel(0, float(step.value or 0))


def _wait_for(page: Page, step: Step, timeout_ms: int) -> None:
    locate(page, _spec(step)).first.wait_for(state="visible", timeout=timeout_ms)


_ACTIONS: dict[str, Callable[[Page, Step, int], None]] = {
    "click": _click,
    "fill": _fill,
    "press": _press,
    "hover": _hover,
    "scroll": _scroll,
    "wait_for": _wait_for,
}


def _spec(step: Step) -> Spec:
    assert step.locator is not None, "the grading model requires a locator here"
    return step.locator


def locate(page: Page, spec: Spec) -> Locator:
    """The playwright locator of a sealed locator; names and texts match exactly (after
    whitespace normalisation), as the contract's steps do."""
    if spec.css is not None:
        return page.locator(spec.css)
    return locate_public(page, cast(Any, spec))  # the same fields as a contract locator


def check(session: Session, assertion: Assertion, timeout_ms: int = TIMEOUT_MS) -> CheckResult:
    """Evaluate one assertion in the session's current page."""
    try:
        locator = locate(session.page, assertion.locator)
        if assertion.expect not in ("count", "hidden") and locator.count() == 0:
            # The page has settled (load, quiet network, fonts): waiting would only cost time.
            return CheckResult(assertion.id, False, "no matching element")
        passed, observed = _EXPECT[assertion.expect](session, locator, assertion, timeout_ms)
    except PlaywrightTimeoutError:
        passed, observed = False, f"timeout after {timeout_ms} ms"
    except PlaywrightError as exc:
        passed, observed = False, f"error: {first_line(exc)}"
    return CheckResult(assertion.id, passed, observed[:200])


def _visible(_s: Session, loc: Locator, _a: Assertion, timeout_ms: int) -> tuple[bool, str]:
    loc.first.wait_for(state="visible", timeout=timeout_ms)
    return True, "visible"


def _hidden(_s: Session, loc: Locator, _a: Assertion, _timeout_ms: int) -> tuple[bool, str]:
    shown = sum(1 for i in range(loc.count()) if loc.nth(i).is_visible())
    return shown == 0, "hidden" if shown == 0 else f"{shown} visible"


def _count(_s: Session, loc: Locator, a: Assertion, _timeout_ms: int) -> tuple[bool, str]:
    found = loc.count()
    return found == int(cast(int, a.value)), str(found)


def _text(_s: Session, loc: Locator, a: Assertion, timeout_ms: int) -> tuple[bool, str]:
    text = " ".join(loc.first.inner_text(timeout=timeout_ms).split())
    return " ".join(str(a.value).split()) in text, text


def _attribute(_s: Session, loc: Locator, a: Assertion, timeout_ms: int) -> tuple[bool, str]:
    got = loc.first.get_attribute(str(a.name), timeout=timeout_ms)
    return got == str(a.value), "absent" if got is None else got


def _value(_s: Session, loc: Locator, a: Assertion, timeout_ms: int) -> tuple[bool, str]:
    got = loc.first.input_value(timeout=timeout_ms)
    return got == str(a.value), got


def _css(session: Session, loc: Locator, a: Assertion, timeout_ms: int) -> tuple[bool, str]:
    first = loc.first
    first.scroll_into_view_if_needed(timeout=timeout_ms)
    box = first.bounding_box(timeout=timeout_ms)
    if box is None:
        return False, "no box"
    args = json.dumps([box["x"], box["y"], box["width"], box["height"], str(a.name)])
    with guard(session):
        got = session.world.evaluate(f"({_CSS_JS})(...{args})")
    if got is None:
        return False, "no element at its box"
    return " ".join(str(got).split()) == " ".join(str(a.value).split()), str(got)


_EXPECT: dict[str, Callable[[Session, Locator, Assertion, int], tuple[bool, str]]] = {
    "visible": _visible,
    "hidden": _hidden,
    "count": _count,
    "text": _text,
    "attribute": _attribute,
    "value": _value,
    "css": _css,
}

# In the isolated world: the element at the box's centre, then up to the one whose box is
# the locator's box (the element itself, not a child painted over it), and its property.
_CSS_JS = """(x, y, w, h, prop) => {
  let el = document.elementFromPoint(x + w / 2, y + h / 2);
  const near = (a, b) => Math.abs(a - b) < 1;
  while (el) {
    const r = el.getBoundingClientRect();
    if (near(r.x, x) && near(r.y, y) && near(r.width, w) && near(r.height, h)) {
      return getComputedStyle(el).getPropertyValue(prop);
    }
    el = el.parentElement;
  }
  return null;
}"""
