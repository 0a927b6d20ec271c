"""public/contract.yaml: the finite route × viewport × state matrix a build must serve.

```yaml
schema_version: 1
routes: ["/"]
viewports: [desktop, mobile]            # names from VIEWPORTS
test_ids: [search-box]                  # the test ids a step may use
states:                                 # every route also has the implicit state "default"
  - name: menu-open
    route: /
    steps:
      - click: {role: button, name: Menu}
      - fill: {test_id: search-box}
        value: shoes
      - press: {}                       # no locator: the key goes to the focused element
        key: Enter
      - scroll: {y: 600}                # or a locator, scrolled into view
      - wait_for: {text: Results}
motion:                                 # named transitions, recorded as motion evidence
  - name: menu-slide
    route: /
    viewport: mobile                    # one of this contract's viewports
    steps:                              # as a state's; none: the page load starts it
      - click: {role: button, name: Menu}
    frames: 8                           # 2 to 32, evenly spread over duration_ms
    duration_ms: 700                    # a multiple of frames - 1 (whole ms per frame)
build: {command: [], output: site}
```
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Discriminator,
    Field,
    PlainSerializer,
    Tag,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from recon.model.base import Strict, Versioned, union_tag
from recon.model.values import MAX_SCROLL_PX, Id, RelativePath, Route

DEFAULT_STATE = "default"
MAX_STEPS = 100


class Viewport(Strict):
    name: Id
    width: int = Field(ge=1, le=4096)
    height: int = Field(ge=1, le=4096)


# The viewport registry: a contract names viewports, it never sizes them.
VIEWPORTS: Mapping[str, Viewport] = MappingProxyType(
    {
        "desktop": Viewport(name="desktop", width=1440, height=900),
        "mobile": Viewport(name="mobile", width=390, height=844),
        "tablet": Viewport(name="tablet", width=768, height=1024),
    }
)


def _named_viewport(value: Any) -> Any:
    if isinstance(value, Viewport):
        return value
    known = ", ".join(sorted(VIEWPORTS))
    if not isinstance(value, str):
        raise PydanticCustomError(
            "viewport_name",
            "a viewport is a name (known: {known}); write one of them",
            {"known": known},
        )
    if value in VIEWPORTS:
        return VIEWPORTS[value]
    raise PydanticCustomError(
        "unknown_viewport",
        "unknown viewport {got} (known: {known}); use one of them",
        {"got": repr(value), "known": known},
    )


def _known_viewport(value: str) -> str:
    if value not in VIEWPORTS:
        raise PydanticCustomError(
            "unknown_viewport",
            "unknown viewport {got} (known: {known}); use one of them",
            {"got": repr(value), "known": ", ".join(sorted(VIEWPORTS))},
        )
    return value


ViewportName = Annotated[
    str,
    AfterValidator(_known_viewport),
    WithJsonSchema({"type": "string", "enum": sorted(VIEWPORTS)}),
]
"""The name of a viewport of the registry (sealed checks name viewports; contracts too)."""

NamedViewport = Annotated[
    Viewport,
    BeforeValidator(_named_viewport),
    PlainSerializer(lambda v: v.name, return_type=str),
    WithJsonSchema({"type": "string", "enum": sorted(VIEWPORTS)}),
]

LOCATOR_SHAPES = ({"role"}, {"role", "name"}, {"label"}, {"text"}, {"test_id"})
LOCATOR_HELP = "one of {role[, name]}, {label}, {text}, {test_id}"
ACTIONS = ("click", "fill", "press", "hover", "scroll", "wait_for")


class Locator(Strict):
    """How a step finds its element: an accessible role (and name), label, text or test id."""

    role: str | None = None
    name: str | None = None
    label: str | None = None
    text: str | None = None
    test_id: str | None = None

    def given(self) -> dict[str, str]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class Offset(Strict):
    """A scroll by pixels (``scroll: {y: 600}``)."""

    x: int = Field(default=0, ge=-MAX_SCROLL_PX, le=MAX_SCROLL_PX)
    y: int = Field(ge=-MAX_SCROLL_PX, le=MAX_SCROLL_PX)


def _scroll_kind(value: Any) -> str:
    offset = isinstance(value, Offset) or (isinstance(value, dict) and {"x", "y"} & set(value))
    return union_tag("offset" if offset else "locator")


Scroll = Annotated[
    Annotated[Offset, Tag(union_tag("offset"))] | Annotated[Locator, Tag(union_tag("locator"))],
    Discriminator(_scroll_kind),
]
"""``scroll: {y: 600}`` scrolls by pixels; a locator scrolls its element into view."""


def _fail(kind: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(kind, message)


class Step(Strict):
    """One public interaction; exactly one action key, plus ``value`` (fill) or ``key`` (press)."""

    click: Locator | None = None
    fill: Locator | None = None
    press: Locator | None = None
    hover: Locator | None = None
    scroll: Scroll | None = None
    wait_for: Locator | None = None
    value: str | None = None
    key: str | None = None

    @property
    def action(self) -> str:
        return next(a for a in ACTIONS if a in self.model_fields_set)

    @property
    def target(self) -> Locator | Offset | None:
        found: Locator | Offset | None = getattr(self, self.action)
        return found

    @model_validator(mode="after")
    def _one_action(self) -> Step:
        actions = [a for a in ACTIONS if a in self.model_fields_set]
        if len(actions) != 1:
            got = ", ".join(actions) or "none"
            raise _fail(
                "step",
                f"a step has exactly one action of {', '.join(ACTIONS)} (got {got}); keep one",
            )
        action = actions[0]
        for extra, owner in (("value", "fill"), ("key", "press")):
            given = getattr(self, extra) is not None
            if given != (action == owner):
                need, fix = ("needs", "add it") if action == owner else ("takes no", "remove it")
                raise _fail("step", f"{action} {need} {extra!r}; {fix}")
        self._check_locator(action)
        return self

    def _check_locator(self, action: str) -> None:
        target = getattr(self, action)
        if isinstance(target, Offset):
            return
        shape = set(target.given()) if target is not None else set()
        if not shape:
            if action == "press":
                return
            raise _fail("step", f"{action} needs a locator: {LOCATOR_HELP}; add one")
        if shape not in LOCATOR_SHAPES:
            keys = ", ".join(sorted(shape))
            raise _fail(
                "step", f"{action}: a locator is {LOCATOR_HELP}, not {{{keys}}}; keep one kind"
            )

    @model_serializer
    def dump(self) -> dict[str, Any]:
        """Canonical JSON form (what cell keys hash); validates back to an equal step."""
        target = self.target
        out: dict[str, Any] = {self.action: _given(target) if target is not None else None}
        out.update({k: getattr(self, k) for k in ("value", "key") if getattr(self, k) is not None})
        return out


def _given(target: Locator | Offset) -> dict[str, Any] | None:
    if isinstance(target, Offset):
        return target.model_dump()
    return target.given() or None  # ``press: {}`` and ``press: null`` are the same step


class State(Strict):
    """A named state reached from ``route`` by public steps (the default state has none)."""

    name: Id
    route: Route
    steps: list[Step] = Field(min_length=1, max_length=MAX_STEPS)

    @field_validator("name")
    @classmethod
    def _not_default(cls, value: str) -> str:
        if value == DEFAULT_STATE:
            raise _fail(
                "state", f"{DEFAULT_STATE!r} is the implicit state of every route; rename it"
            )
        return value


MOTION_FRAMES = (2, 32)  # a strip of up to 32 viewport-wide frames
MOTION_MAX_MS = 60_000


class Transition(Strict):
    """A named transition recorded as motion evidence: ``frames`` frames spread evenly over
    ``duration_ms`` of page time, the first right after ``steps`` (or the page load)."""

    name: Id
    route: Route
    viewport: NamedViewport
    steps: list[Step] = Field(default_factory=list, max_length=MAX_STEPS)
    frames: int  # before duration_ms: its check reads frames
    duration_ms: int

    @property
    def step_ms(self) -> int:
        """Page time between two frames."""
        return self.duration_ms // (self.frames - 1)

    @field_validator("frames")
    @classmethod
    def _frames(cls, value: int) -> int:
        low, high = MOTION_FRAMES
        if not low <= value <= high:
            raise _fail("frames", f"frames must be from {low} to {high}; use a count in range")
        return value

    @field_validator("duration_ms")
    @classmethod
    def _whole_frame_interval(cls, value: int, info: ValidationInfo) -> int:
        if not 1 <= value <= MOTION_MAX_MS:
            raise _fail(
                "duration", f"duration_ms must be from 1 to {MOTION_MAX_MS}; use one in range"
            )
        frames = info.data.get("frames")
        if isinstance(frames, int) and value % (frames - 1):
            near = max(1, round(value / (frames - 1))) * (frames - 1)
            raise _fail(
                "duration",
                f"duration_ms must be a multiple of frames - 1 = {frames - 1} (whole ms "
                f"between frames); use {near}",
            )
        return value


class BuildStep(Strict):
    """How a workspace turns into the output folder that is rendered."""

    command: list[str] = Field(default_factory=list, max_length=64)
    output: RelativePath  # a folder inside the workspace, never the workspace itself


class Contract(Versioned):
    """public/contract.yaml: routes × named viewports, plus named states reached by steps."""

    routes: list[Route] = Field(min_length=1, max_length=64)
    viewports: list[NamedViewport] = Field(min_length=1)
    test_ids: list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(
        default_factory=list, max_length=500
    )
    states: list[State] = Field(default_factory=list, max_length=64)
    motion: list[Transition] = Field(default_factory=list, max_length=16)
    build: BuildStep

    @model_validator(mode="after")
    def _consistent(self) -> Contract:
        for label, names in (
            ("routes", self.routes),
            ("viewports", [v.name for v in self.viewports]),
            ("states", [s.name for s in self.states]),
            ("motion", [m.name for m in self.motion]),
        ):
            if len(set(names)) != len(names):
                raise _fail(
                    "unique", f"{label}: entries must be unique, got {names}; remove the repeats"
                )
        problems = [*self._unknown_routes(), *self._unlisted_test_ids(), *self._other_viewports()]
        if problems:
            raise ValidationError.from_exception_data(type(self).__name__, problems)
        return self

    def _stepped(self) -> list[tuple[str, int, State | Transition]]:
        """States and transitions: what has a route and steps, with where it is listed."""
        states = [("states", i, s) for i, s in enumerate(self.states)]
        return [*states, *(("motion", i, m) for i, m in enumerate(self.motion))]

    def _unknown_routes(self) -> list[InitErrorDetails]:
        return [
            _detail(
                (field, i, "route"),
                item.route,
                f"not one of routes {self.routes}; add it to routes or fix it",
            )
            for field, i, item in self._stepped()
            if item.route not in self.routes
        ]

    def _other_viewports(self) -> list[InitErrorDetails]:
        names = [v.name for v in self.viewports]
        return [
            _detail(
                ("motion", i, "viewport"),
                m.viewport.name,
                f"not one of viewports {names}; add it to viewports or fix it",
            )
            for i, m in enumerate(self.motion)
            if m.viewport.name not in names
        ]

    def _unlisted_test_ids(self) -> list[InitErrorDetails]:
        problems = []
        for field, i, item in self._stepped():
            for j, step in enumerate(item.steps):
                test_id = getattr(step.target, "test_id", None)
                if test_id is not None and test_id not in self.test_ids:
                    where = (field, i, "steps", j, step.action, "test_id")
                    why = f"test id {test_id!r} is not listed in test_ids; list it there"
                    problems.append(_detail(where, test_id, why))
        return problems


def _detail(loc: tuple[str | int, ...], got: Any, message: str) -> InitErrorDetails:
    return InitErrorDetails(type=_fail("contract", message), loc=loc, input=got)
