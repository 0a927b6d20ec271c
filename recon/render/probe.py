"""Sealed checks, evaluated from the harness's side: assertions and workflows.

Elements are found by the one locator engine (:mod:`recon.render.locate`: chromium's
computed roles and names, labels, texts, test ids, css) and every reading is taken from
the matched element itself, in the harness's isolated world: its computed style, its
visibility (its own box, and ``display``/``visibility``/``opacity`` of it and its
ancestors), its inner text, attribute or input value. Where the element lies does not
matter: one wider than the viewport, or scrolled out of it, is read all the same. No
check definition is ever injected into the page, and a page that overrides DOM APIs
(``document.querySelector``, ``getBoundingClientRect``, ``getComputedStyle``...) cannot
change an outcome. A check that fails is a failed result, never an exception.

Which match a one-element expectation (visible, text, attribute, value, css) reads is
the assertion's ``match``: the first (the default), ``any``, ``all`` or ``nth=N``.
``hidden`` passes when no match is visible; ``count`` counts the matches. The page has
settled (load, quiet network, fonts) and its clock is paused, so a check reads at once:
waiting could only cost time.

A workflow replays its steps in one page with the one step interpreter
(:func:`recon.render.steps.run_step`, as contract states and motion do); at each
checkpoint its assertions are evaluated and a viewport screenshot is kept; a
``preserve`` checkpoint is then reloaded (or navigated to ``navigate_to``) and
evaluated again. Rows are keyed by
:func:`recon.model.grading.checkpoint_key`. A failed step ends the workflow: later checkpoints get
no rows (the grade counts them as not reached).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Browser
from playwright.sync_api import Error as PlaywrightError

from recon.model.grading import Assertion, Checkpoint, Workflow, checkpoint_key
from recon.render.locate import VISIBLE_JS, Found, Locate
from recon.render.page import (
    Reader,
    Session,
    Viewport,
    first_line,
    guard,
    load,
    open_page,
)
from recon.render.session import HARNESS_LIMIT_S
from recon.render.steps import run_step

SETTLE_MS = 5000
TIMEOUT_MS = 10_000
"""Per action on an element that exists, and for a ``wait_for`` step. Generous on purpose:
a missing element fails at once (the page has settled), so the timeout only guards a
busy machine."""
OBSERVED_LIMIT = 200


@dataclass(frozen=True)
class CheckResult:
    """One assertion's outcome; ``matches`` counts the locator's matches, ``ambiguous``
    names them when the assertion gives no ``match`` and there are several."""

    id: str
    passed: bool
    observed: str
    matches: int = 0
    ambiguous: tuple[str, ...] = ()

    def row(self) -> dict[str, Any]:
        return {"id": self.id, "passed": self.passed, "observed": self.observed}


@dataclass
class WorkflowRun:
    """Rows per checkpoint key, the viewport PNG at each checkpoint, and what went wrong;
    ``results`` keeps each checkpoint's full :class:`CheckResult` list."""

    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    screenshots: dict[str, bytes] = field(default_factory=dict)
    failure: str | None = None
    page_failures: list[str] = field(default_factory=list)
    results: dict[str, list[CheckResult]] = field(default_factory=dict)


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
            problem = run_step(session, item, route=workflow.route, timeout_ms=timeout_ms,
                               settle_ms=timeout_ms, load_ms=settle_ms)  # fmt: skip
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
    run.results[here] = [check(session, a, timeout_ms) for a in cp.assertions]
    run.screenshots[here] = _screenshot(session)
    if cp.preserve is not None:
        route = workflow.route if cp.preserve == "reload" else str(cp.navigate_to)
        load(session, route, settle_ms)
        again = checkpoint_key(workflow.id, cp.id, preserved=True)
        run.results[again] = [check(session, a, timeout_ms) for a in cp.assertions]
    run.rows = {k: [r.row() for r in results] for k, results in run.results.items()}


def _screenshot(session: Session) -> bytes:
    try:
        with guard(session, HARNESS_LIMIT_S):
            return session.page.screenshot(animations="disabled", caret="hide")
    except PlaywrightError as exc:
        session.failures.append(f"checkpoint screenshot failed: {first_line(exc)}")
        return b""


# --- assertions ------------------------------------------------------------------------


def check(session: Session, assertion: Assertion, timeout_ms: int = TIMEOUT_MS) -> CheckResult:
    """Evaluate one assertion in the session's current page (``timeout_ms`` is unused: a
    settled page with a paused clock is read at once)."""
    locate = Locate(session.cdp, session.world)
    count = 0
    ambiguous: tuple[str, ...] = ()
    try:
        with guard(session):
            found = locate.find(assertion.locator)
            count = found.count
            if assertion.match is None and count > 1 and assertion.expect in _READERS:
                ambiguous = tuple(found.describe())
            passed, observed = _evaluate(found, assertion)
    except PlaywrightError as exc:
        passed, observed = False, f"error: {first_line(exc)}"
    finally:
        with suppress(PlaywrightError):
            locate.release()
    return CheckResult(assertion.id, passed, observed[:OBSERVED_LIMIT], count, ambiguous)


def _evaluate(found: Found, a: Assertion) -> tuple[bool, str]:
    if a.expect == "count":
        return found.count == int(a.value or 0), str(found.count)
    if a.expect == "hidden":
        shown = sum(bool(v) for v in found.read(VISIBLE_JS, list(range(found.count))))
        return shown == 0, "hidden" if shown == 0 else f"{shown} visible"
    if found.count == 0:
        return False, "no matching element"
    indexes = _chosen(a.match, found.count)
    if not indexes:
        return False, f"no match {a.match} (only {found.count})"
    script, judge = _READERS[a.expect]
    outcomes = [judge(a, v) for v in found.read(script, indexes, a.name)]
    observed = " | ".join(o for _, o in outcomes)
    if a.match == "any":
        return any(p for p, _ in outcomes), observed
    return all(p for p, _ in outcomes), observed


def _chosen(match: str | None, count: int) -> list[int]:
    """The match indexes an expectation reads (empty when ``nth=N`` is out of range)."""
    if match in ("any", "all"):
        return list(range(count))
    nth = int(match.removeprefix("nth=")) if match and match.startswith("nth=") else 0
    return [nth] if nth < count else []


def _same(got: str, want: object) -> bool:
    return " ".join(got.split()) == " ".join(str(want).split())


def _visible(_a: Assertion, got: Any) -> tuple[bool, str]:
    return bool(got), "visible" if got else "not visible"


def _text(a: Assertion, got: Any) -> tuple[bool, str]:
    text = " ".join(str(got or "").split())
    return " ".join(str(a.value).split()) in text, text


def _attribute(a: Assertion, got: Any) -> tuple[bool, str]:
    return got == str(a.value), "absent" if got is None else str(got)


def _value(a: Assertion, got: Any) -> tuple[bool, str]:
    if got is None:
        return False, "not an input, textarea or select element"
    return got == str(a.value), str(got)


def _css(a: Assertion, got: Any) -> tuple[bool, str]:
    return _same(str(got), a.value), str(got)


# Per one-element expectation: what is read from a match (in the isolated world, with the
# assertion's ``name`` as second argument) and how it is judged.
_READERS: dict[str, tuple[str, Callable[[Assertion, Any], tuple[bool, str]]]] = {
    "visible": (VISIBLE_JS, _visible),
    "text": ("(el) => el.innerText ?? el.textContent", _text),
    "attribute": ("(el, name) => el.getAttribute(name)", _attribute),
    "value": (
        "(el) => ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName) ? el.value : null",
        _value,
    ),
    "css": ("(el, name) => getComputedStyle(el).getPropertyValue(name)", _css),
}
