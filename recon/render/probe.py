"""Sealed functional checks, evaluated from the playwright side.

Checks are resolved with playwright locators, which run in playwright's own isolated
world: no check definition is ever injected into the page, and a page that overrides
DOM APIs (``document.querySelector``, ``getBoundingClientRect``...) cannot change the
outcome. A check that fails or times out is a failed result, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from playwright.sync_api import Browser, Locator, Page
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from recon.errors import ConfigError
from recon.render.page import Reader, Viewport, load, open_page

LOCATOR_SHAPES = ({"role"}, {"role", "name"}, {"text"}, {"test_id"}, {"css"})
EXPECTS = ("visible", "count", "text")


@dataclass(frozen=True)
class Check:
    """One check: ``locator`` is {"role", "name"?} | {"text"} | {"test_id"} | {"css"}."""

    id: str
    locator: dict[str, str]
    expect: str  # "visible" | "count" | "text" (first match's inner text contains value)
    value: str | int | None = None

    def __post_init__(self) -> None:
        where = f"check {self.id!r}"
        if set(self.locator) not in LOCATOR_SHAPES or not all(
            isinstance(v, str) for v in self.locator.values()
        ):
            shapes = ", ".join("+".join(sorted(s)) for s in LOCATOR_SHAPES)
            raise ConfigError(f"{where}: locator: keys must be one of {shapes}, with str values")
        if self.expect not in EXPECTS:
            raise ConfigError(f"{where}: expect: must be one of {', '.join(EXPECTS)}")
        if self.expect == "count" and (type(self.value) is not int):
            raise ConfigError(f"{where}: value: an int is required for expect=count")
        if self.expect == "text" and not isinstance(self.value, str):
            raise ConfigError(f"{where}: value: a str is required for expect=text")


@dataclass(frozen=True)
class CheckResult:
    id: str
    passed: bool
    observed: str


def run_checks(
    browser: Browser,
    read: Reader,
    route: str,
    viewport: Viewport,
    checks: Sequence[Check],
    *,
    settle_ms: int = 5000,
    timeout_ms: int = 1000,
) -> list[CheckResult]:
    """Load ``route`` as :func:`recon.render.capture` does, then evaluate each check."""
    with open_page(browser, read, viewport) as session:
        load(session, route, settle_ms)
        return [_run(session.page, check, timeout_ms) for check in checks]


def _run(page: Page, check: Check, timeout_ms: int) -> CheckResult:
    locator = _locate(page, check.locator)
    try:
        passed, observed = _EXPECT[check.expect](locator, check.value, timeout_ms)
    except PlaywrightTimeoutError:
        passed, observed = False, f"timeout after {timeout_ms} ms"
    except PlaywrightError as exc:
        passed, observed = False, f"error: {exc.message.splitlines()[0] if exc.message else exc}"
    return CheckResult(check.id, passed, observed)


def _locate(page: Page, spec: dict[str, str]) -> Locator:
    if "role" in spec:
        return page.get_by_role(cast(Any, spec["role"]), name=spec.get("name"))
    if "text" in spec:
        return page.get_by_text(spec["text"])
    if "test_id" in spec:
        return page.get_by_test_id(spec["test_id"])
    return page.locator(spec["css"])


def _visible(locator: Locator, _value: object, timeout_ms: int) -> tuple[bool, str]:
    locator.first.wait_for(state="visible", timeout=timeout_ms)
    return True, "visible"


def _count(locator: Locator, value: object, _timeout_ms: int) -> tuple[bool, str]:
    found = locator.count()
    return found == value, str(found)


def _text(locator: Locator, value: object, timeout_ms: int) -> tuple[bool, str]:
    text = locator.first.inner_text(timeout=timeout_ms)
    return str(value) in text, text[:200]


_EXPECT: dict[str, Callable[[Locator, object, int], tuple[bool, str]]] = {
    "visible": _visible,
    "count": _count,
    "text": _text,
}
