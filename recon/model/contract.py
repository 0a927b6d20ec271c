"""public/contract.yaml: the finite route × viewport × state matrix a build must serve.

```yaml
schema_version: 1
routes: ["/"]
viewports: [desktop, mobile]            # names from VIEWPORTS
test_ids: [search-box]                  # the test ids a step may use
states:                                 # every route also has the implicit state "default"
  - name: menu-open
    route: /
    viewports: [mobile]                 # optional: only these (default: every viewport)
    steps:                              # the one step vocabulary (recon.model.interaction)
      - click: {role: button, name: Menu}
      - fill: {test_id: search-box}
        value: shoes
      - press: {}                       # no locator: the key goes to the focused element
        key: Enter
      - scroll: {y: 600}                # or a locator, scrolled into view
      - wait_for: {text: Results}       # also {title}, {placeholder}, {alt}; never {css}
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

from typing import Annotated, Any

from pydantic import Field, ValidationError, ValidationInfo, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from recon.model.base import Strict, Versioned
from recon.model.interaction import PUBLIC_KINDS, Locator, Offset, Step
from recon.model.values import Id, RelativePath, Route
from recon.model.viewport import VIEWPORTS, NamedViewport, Viewport, ViewportName

DEFAULT_STATE = "default"
MAX_STEPS = 100

__all__ = [
    "VIEWPORTS",
    "BuildStep",
    "Contract",
    "Locator",
    "NamedViewport",
    "Offset",
    "State",
    "Step",
    "Transition",
    "Viewport",
    "ViewportName",
]


def _fail(kind: str, message: str) -> PydanticCustomError:
    return PydanticCustomError(kind, message)


class State(Strict):
    """A named state reached from ``route`` by public steps (the default state has none)."""

    name: Id
    route: Route
    steps: list[Step] = Field(min_length=1, max_length=MAX_STEPS)
    viewports: list[ViewportName] | None = Field(default=None, min_length=1)
    """Where the state exists (a menu drawer at mobile only, say); None: at every viewport
    of the contract."""

    def applies(self, viewport: Viewport) -> bool:
        """Whether this state is part of the matrix at ``viewport``."""
        return self.viewports is None or viewport.name in self.viewports

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
            *((f"states[{i}].viewports", s.viewports or []) for i, s in enumerate(self.states)),
        ):
            if len(set(names)) != len(names):
                raise _fail(
                    "unique", f"{label}: entries must be unique, got {names}; remove the repeats"
                )
        problems = [
            *self._unknown_routes(),
            *self._unlisted_test_ids(),
            *self._other_viewports(),
            *self._sealed_locators(),
        ]
        if problems:
            raise ValidationError.from_exception_data(type(self).__name__, problems)
        return self

    def _stepped(self) -> list[tuple[str, int, State | Transition]]:
        """States and transitions: what has a route and steps, with where it is listed."""
        states = [("states", i, s) for i, s in enumerate(self.states)]
        return [*states, *(("motion", i, m) for i, m in enumerate(self.motion))]

    def viewports_of(self, state: State) -> list[Viewport]:
        """The contract's viewports ``state`` exists at, in the contract's order."""
        return [vp for vp in self.viewports if state.applies(vp)]

    def _unknown_routes(self) -> list[InitErrorDetails]:
        fix = f"not one of routes {self.routes}; add it to routes or fix it"
        found = [
            _detail((field, i, "route"), item.route, fix)
            for field, i, item in self._stepped()
            if item.route not in self.routes
        ]
        for field, i, item in self._stepped():
            for j, step in enumerate(item.steps):
                if step.goto is not None and step.goto not in self.routes:
                    found.append(_detail((field, i, "steps", j, "goto"), step.goto, fix))
        return found

    def _other_viewports(self) -> list[InitErrorDetails]:
        names = [v.name for v in self.viewports]
        fix = f"not one of viewports {names}; add it to viewports or fix it"
        found = [
            _detail(("motion", i, "viewport"), m.viewport.name, fix)
            for i, m in enumerate(self.motion)
            if m.viewport.name not in names
        ]
        for i, state in enumerate(self.states):
            found += [
                _detail(("states", i, "viewports", j), name, fix)
                for j, name in enumerate(state.viewports or [])
                if name not in names
            ]
        return found

    def _sealed_locators(self) -> list[InitErrorDetails]:
        """A css locator in a public step: the contract is public, and css names page
        structure a Candidate cannot see."""
        kinds = ", ".join(f"{{{k}}}" for k in PUBLIC_KINDS)
        why = (
            f"a css locator is for sealed checks only; a public step finds its element by "
            f"{kinds} (role with an optional name); use one of them"
        )
        return [
            _detail((field, i, "steps", j, step.action, "css"), step.locator.css, why)
            for field, i, item in self._stepped()
            for j, step in enumerate(item.steps)
            if step.locator is not None and step.locator.sealed_only
        ]

    def _unlisted_test_ids(self) -> list[InitErrorDetails]:
        problems = []
        for field, i, item in self._stepped():
            for j, step in enumerate(item.steps):
                test_id = step.locator.test_id if step.locator is not None else None
                if test_id is not None and test_id not in self.test_ids:
                    where = (field, i, "steps", j, step.action, "test_id")
                    why = f"test id {test_id!r} is not listed in test_ids; list it there"
                    problems.append(_detail(where, test_id, why))
        return problems


def _detail(loc: tuple[str | int, ...], got: Any, message: str) -> InitErrorDetails:
    return InitErrorDetails(type=_fail("contract", message), loc=loc, input=got)
