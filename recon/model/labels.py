"""Public labels of sealed checks: what a run page may say about a check.

A sealed assertion, workflow or checkpoint may carry a ``label``: a short public
description such as "the todo counter updates". The run page shows it beside the check's
pass/fail; the check itself (its locator, its expected value) stays sealed. So a label
may not contain what it describes: any string of its own locator (css, text, label, test
id, title, placeholder, alt text, accessible name), any expected value, or, for a
workflow, a value one of its steps types (a filled value, a key, a goto route). Matching
ignores case and runs of whitespace; a whole-number value is matched as a number on its
own (``3`` in "3 filters", not in "300"). A bare role (``heading``, ``link``) is common
vocabulary and is not matched.

A check without a label is shown by its kind and position (:func:`fallback`), never by
its id.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Annotated

from pydantic import AfterValidator, BaseModel, Field

MAX_LABEL = 120
CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _one_line(value: str) -> str:
    if CONTROL.search(value) or not value.strip():
        raise ValueError("a label is one line of text; remove line breaks and control characters")
    return value


Label = Annotated[str, Field(min_length=1, max_length=MAX_LABEL), AfterValidator(_one_line)]
"""One line of at most 120 characters."""
LOCATOR_STRINGS = ("css", "text", "label", "test_id", "name", "title", "placeholder", "alt")


def _fold(text: str) -> str:
    return " ".join(text.casefold().split())


def locator_secrets(locator: BaseModel | None) -> list[str]:
    """The strings of a locator a label may not contain."""
    if locator is None:
        return []
    found = (getattr(locator, field, None) for field in LOCATOR_STRINGS)
    return [value for value in found if isinstance(value, str) and value.strip()]


def leaks(label: str | None, secrets: Iterable[str | int | None]) -> list[str]:
    """The secrets ``label`` contains (none: an empty list)."""
    if label is None:
        return []
    folded = _fold(label)
    found = []
    for secret in secrets:
        if isinstance(secret, bool) or secret is None:
            continue
        if isinstance(secret, int):
            hit = re.search(rf"(?<![\d.]){secret}(?![\d.]|,\d)", folded) is not None
        else:
            hit = bool(_fold(secret)) and _fold(secret) in folded
        if hit and str(secret) not in found:
            found.append(str(secret))
    return found


def refuse(label: str | None, secrets: Iterable[str | int | None], what: str) -> None:
    """Raise ``ValueError`` when ``label`` gives away one of ``secrets``."""
    leaked = leaks(label, secrets)
    if leaked:
        shown = ", ".join(repr(s) for s in leaked)
        raise ValueError(
            f"label {label!r} contains {what} {shown}; a label is public: describe what the "
            "check means without its selector or expected value"
        )


def fallback(kind: str, index: int) -> str:
    """The public name of an unlabelled check: its kind and 1-based position."""
    return f"{kind} check {index + 1} (unlabelled)"
