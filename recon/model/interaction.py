"""The one interaction vocabulary: how a contract state, a motion transition and a sealed
workflow find an element (:class:`Locator`) and act on it (:class:`Step`).

A step is one action key whose value is its target, plus ``value`` (fill) or ``key``
(press)::

    - click: {role: button, name: Menu}
    - fill: {label: Email}
      value: ada@example.org
    - press: {label: New todo}            # or press: {} : the key goes to the focused element
      key: Enter
    - hover: {text: Sale}
    - scroll: {y: 600}                    # pixels, or a locator scrolled into view
    - wait_for: {role: dialog}            # until it is visible
    - goto: /contact.html                 # load another route of the contract
    - reload: {}                          # load the current route again

A locator is one of ``{role[, name]}``, ``{label}``, ``{text}``, ``{test_id}``, ``{title}``,
``{placeholder}``, ``{alt}`` or, in sealed checks only, ``{css}`` (public material may
not depend on page structure a Candidate cannot see: the contract refuses it). One
interpreter runs every step (:mod:`recon.render.steps`) and one engine finds every
locator (:mod:`recon.render.locate`).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from recon.model.base import Strict, union_tag
from recon.model.labels import locator_secrets
from recon.model.values import MAX_SCROLL_PX, Route

PUBLIC_KINDS = ("role", "label", "text", "test_id", "title", "placeholder", "alt")
SEALED_KINDS = ("css",)
LOCATOR_SHAPES = (
    {"role"},
    {"role", "name"},
    *({kind} for kind in PUBLIC_KINDS[1:]),
    *({kind} for kind in SEALED_KINDS),
)
LOCATOR_HELP = (
    "one of {role[, name]}, {label}, {text}, {test_id}, {title}, {placeholder}, {alt} "
    "(and {css} in sealed checks)"
)
ACTIONS = ("click", "fill", "press", "hover", "scroll", "wait_for", "goto", "reload")
NEEDS_LOCATOR = ("click", "fill", "hover", "scroll", "wait_for")
EXTRAS = (("value", "fill"), ("key", "press"))
"""A step's extra field and the one action that takes it."""
MAX_TEXT = 4096


CHROMIUM_ROLES = {"img": "image"}
"""ARIA role names chromium's accessibility tree spells otherwise (ARIA's -> chromium's)."""


class Locator(Strict):
    """How an element is found: exactly one kind (``name`` only beside ``role``)."""

    role: str | None = None
    name: str | None = None
    label: str | None = None
    text: str | None = None
    test_id: str | None = None
    title: str | None = None
    placeholder: str | None = None
    alt: str | None = None
    css: str | None = None

    @field_validator("role")
    @classmethod
    def _chromium_spelling(cls, role: str | None) -> str | None:
        """A role is chromium's computed name (``recon.grade.selectors`` lists them): an
        ARIA name chromium spells otherwise could never match, so it is refused here, not
        left to fail in the browser with "no matching element"."""
        if role in CHROMIUM_ROLES:
            raise ValueError(
                f"{role!r} is ARIA's name, which chromium computes as "
                f"{CHROMIUM_ROLES[role]!r}; write role: {CHROMIUM_ROLES[role]}"
            )
        return role

    def given(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump().items() if v is not None}

    @property
    def sealed_only(self) -> bool:
        """Whether this locator is of a kind public material may not use (css)."""
        return any(getattr(self, kind) is not None for kind in SEALED_KINDS)


def locator_problem(locator: Locator | None) -> str | None:
    """Why ``locator`` is not a locator (nothing, or two kinds at once), or None."""
    shape = set(locator.given()) if locator is not None else set()
    if not shape:
        return f"needs a locator: {LOCATOR_HELP}; add one"
    if shape not in LOCATOR_SHAPES:
        keys = ", ".join(sorted(shape))
        return f"a locator is {LOCATOR_HELP}, not {{{keys}}}; keep one kind"
    return None


class Offset(Strict):
    """A scroll by pixels (``scroll: {y: 600}``)."""

    x: int = Field(default=0, ge=-MAX_SCROLL_PX, le=MAX_SCROLL_PX)
    y: int = Field(ge=-MAX_SCROLL_PX, le=MAX_SCROLL_PX)


class Nothing(Strict):
    """The target of ``reload: {}`` (it takes none)."""


def _scroll_kind(value: Any) -> str:
    offset = isinstance(value, Offset) or (isinstance(value, dict) and {"x", "y"} & set(value))
    return union_tag("offset" if offset else "locator")


Scroll = Annotated[
    Annotated[Offset, Tag(union_tag("offset"))] | Annotated[Locator, Tag(union_tag("locator"))],
    Discriminator(_scroll_kind),
]
"""``scroll: {y: 600}`` scrolls by pixels; a locator scrolls its element into view."""


def _fail(message: str) -> PydanticCustomError:
    return PydanticCustomError("step", message)


class Step(Strict):
    """One interaction: exactly one action key, plus ``value`` (fill) or ``key`` (press)."""

    click: Locator | None = None
    fill: Locator | None = None
    press: Locator | None = None
    hover: Locator | None = None
    scroll: Scroll | None = None
    wait_for: Locator | None = None
    goto: Route | None = None
    reload: Nothing | None = None
    value: str | None = Field(default=None, max_length=MAX_TEXT)
    key: str | None = Field(default=None, min_length=1, max_length=64)

    @model_validator(mode="before")
    @classmethod
    def _not_the_old_shape(cls, data: Any) -> Any:
        if isinstance(data, dict) and "action" in data:
            raise _fail(
                "a step is written as its action and its target (click: {role: button, "
                "name: Menu}; `value` with fill, `key` with press, goto: /route, reload: {}), "
                f"not {{action: …, locator: …}}; write this one as {rewritten(data)}"
            )
        return data

    @property
    def action(self) -> str:
        return next(a for a in ACTIONS if a in self.model_fields_set)

    @property
    def target(self) -> Locator | Offset | None:
        """The locator or offset an element action acts on (None: press without a
        locator, goto, reload)."""
        found = getattr(self, self.action)
        return found if isinstance(found, Locator | Offset) and found != Locator() else None

    @property
    def locator(self) -> Locator | None:
        target = self.target
        return target if isinstance(target, Locator) else None

    @model_validator(mode="after")
    def _one_action(self) -> Step:
        actions = [a for a in ACTIONS if a in self.model_fields_set]
        if len(actions) != 1:
            got = ", ".join(actions) or "none"
            raise _fail(
                f"a step has exactly one action of {', '.join(ACTIONS)} (got {got}); keep one"
            )
        action = actions[0]
        for extra, owner in EXTRAS:
            given = getattr(self, extra) is not None
            if given != (action == owner):
                need, fix = ("needs", "add it") if action == owner else ("takes no", "remove it")
                raise _fail(f"{action} {need} {extra!r}; {fix}")
        if action == "goto" and self.goto is None:
            raise _fail("goto needs a route of the contract (goto: /about.html); add it")
        self._check_locator(action)
        return self

    def _check_locator(self, action: str) -> None:
        target = getattr(self, action)
        if isinstance(target, Offset) or action in ("goto", "reload"):
            return
        if action == "press" and (target is None or not target.given()):
            return
        problem = locator_problem(target)
        if problem is not None:
            empty = target is None or not target.given()
            raise _fail(f"{action} {problem}" if empty else f"{action}: {problem}")

    def secrets(self) -> list[str | int | None]:
        """What a public label of a workflow may not contain of this step."""
        return [*locator_secrets(self.locator), self.value, self.key, self.goto]

    @model_serializer
    def dump(self) -> dict[str, Any]:
        """Canonical JSON form (what cell keys hash); validates back to an equal step."""
        out: dict[str, Any] = {self.action: _dumped(getattr(self, self.action))}
        out.update({k: getattr(self, k) for k, _ in EXTRAS if getattr(self, k) is not None})
        return out


def _dumped(target: Locator | Offset | Nothing | str | None) -> Any:
    if isinstance(target, Offset):
        return target.model_dump()
    if isinstance(target, Locator):
        return target.given() or None  # ``press: {}`` and ``press: null`` are the same step
    if isinstance(target, Nothing):
        return None
    return target


def rewritten(old: dict[str, Any]) -> str:
    """An old-shape step (``{action, locator, value}``) in the one shape, as a person
    would write it in flow YAML."""
    action = str(old.get("action"))
    locator = old.get("locator")
    value = old.get("value")
    target: Any = locator if isinstance(locator, dict) else {}
    extra = ""
    if action == "goto":
        target, value = value, None
    elif action == "scroll" and not locator:
        target, value = {"y": value}, None
    elif action == "press":
        extra = f", key: {value}" if value is not None else ""
        value = None
    if value is not None:
        extra += f", value: {value}"
    return f"{{{action}: {_flow(target)}{extra}}}"


def _flow(target: Any) -> str:
    if isinstance(target, dict):
        return "{" + ", ".join(f"{k}: {v}" for k, v in target.items()) + "}"
    return str(target)
