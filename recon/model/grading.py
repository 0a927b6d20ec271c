"""Sealed evaluation formats (never shown to a Candidate): regions, functional assertions,
workflows, preservation checks, policy rules, thresholds and per-dimension weights."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from recon.model.base import Strict, Versioned, union_tag
from recon.model.contract import Contract
from recon.model.interaction import ACTIONS, Locator, Step, locator_problem
from recon.model.labels import Label, locator_secrets, refuse
from recon.model.values import MAX_PAGE_PX, Id, Route, Share, Weight, summing_to_one
from recon.model.viewport import ViewportName

Ident = Id
MAX_COUNT = 1_000_000
MAX_BOX_WIDTH = 4096
Host = Annotated[
    str, Field(pattern=r"^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$", max_length=253)
]
"""A host name or address, or ``*.suffix`` for its subdomains (no scheme, port or path)."""
Dimension = Literal[
    "global_visual",
    "regional_visual",
    "functional",
    "responsive",
    "workflow",
    "preservation",
    "policy",
]
DIMENSIONS: tuple[str, ...] = get_args(Dimension)
Expect = Literal["visible", "hidden", "count", "text", "attribute", "value", "css"]
ONE_ELEMENT: tuple[str, ...] = ("visible", "text", "attribute", "value", "css")
"""Expectations that read one element per match, so they say which match(es) they mean."""
MATCH_PATTERN = r"^(first|any|all|nth=(0|[1-9][0-9]*))$"
Match = Annotated[str, Field(pattern=MATCH_PATTERN)]


class Assertion(Strict):
    """A locator plus an expectation. ``attribute`` and ``css`` name what they read.

    ``match`` says which of the locator's matches a one-element expectation reads:
    ``first``, ``any`` (one of them passes), ``all`` (every one passes, and there is at
    least one) or ``nth=N`` (the N-th in document order, from 0). Left out, it reads the
    first match, and ``recon validate`` refuses a locator that matches more than one
    element on the reference (name a match or make the locator unique).
    """

    id: Ident
    locator: Locator
    expect: Expect
    name: str | None = None
    value: str | int | None = None
    match: Match | None = None
    weight: Weight = 1.0
    label: Label | None = None  # public: shown on run pages (recon.model.labels)
    discriminates: bool = False  # `recon case validate` requires it to fail on the starter

    @field_validator("locator")
    @classmethod
    def _one_kind(cls, value: Locator) -> Locator:
        problem = locator_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("match", mode="before")
    @classmethod
    def _match_form(cls, value: object) -> object:
        if value is not None and not (isinstance(value, str) and re.match(MATCH_PATTERN, value)):
            raise ValueError(
                f"match is first, any, all or nth=N (N from 0), not {value!r}; use one"
            )
        return value

    @model_validator(mode="after")
    def _complete(self) -> Assertion:
        if self.expect in ("attribute", "css") and not self.name:
            raise ValueError(
                f"expect {self.expect} needs `name` (the attribute or CSS property); add it"
            )
        if self.expect in ("count", "text", "attribute", "value", "css") and self.value is None:
            raise ValueError(f"expect {self.expect} needs `value`; add it")
        if self.expect == "count" and not isinstance(self.value, int):
            raise ValueError("expect count needs a whole number `value`; write how many elements")
        if isinstance(self.value, int) and not 0 <= self.value <= MAX_COUNT:
            raise ValueError(
                f"value: a count is from 0 to {MAX_COUNT}, not {self.value}; use one in range"
            )
        if self.match is not None and self.expect not in ONE_ELEMENT:
            raise ValueError(
                f"expect {self.expect} reads every match; `match` goes only with "
                f"{', '.join(ONE_ELEMENT)}; remove it"
            )
        refuse(self.label, self.secrets(), "its selector or expected value")
        return self

    def secrets(self) -> list[str | int | None]:
        """What a public label of this assertion may not contain."""
        return [*locator_secrets(self.locator), self.value]


class Region(Strict):
    """A high-value region: a selector resolved in the reference, or a fixed box."""

    id: Ident
    selector: str | None = None
    box: tuple[int, int, int, int] | None = None  # x, y, width, height in reference pixels
    viewport: ViewportName = "desktop"
    weight: Weight = 1.0

    @model_validator(mode="after")
    def _one_of(self) -> Region:
        if (self.selector is None) == (self.box is None):
            raise ValueError("a region has a `selector` or a `box`; give exactly one of them")
        if self.box is not None:
            _check_box(self.box)
        return self


def _check_box(box: tuple[int, int, int, int]) -> None:
    x, y, width, height = box
    if x < 0 or y < 0:
        raise ValueError(f"box: the origin ({x}, {y}) is off the page; use x, y >= 0")
    if width <= 0 or height <= 0:
        raise ValueError("box: width and height must be positive; give the region's size")
    if x + width > MAX_BOX_WIDTH or y + height > MAX_PAGE_PX:
        raise ValueError(
            f"box: must lie within {MAX_BOX_WIDTH} x {MAX_PAGE_PX} page pixels; "
            f"keep x + width <= {MAX_BOX_WIDTH} and y + height <= {MAX_PAGE_PX}"
        )


class Checkpoint(Strict):
    """Assertions that must hold at this point of a workflow.

    ``preserve: reload`` or ``navigate`` re-checks them after a reload or a navigation
    (state kept in localStorage, say). ``compare_oracle`` also compares the screenshot
    with the oracle's capture at the same checkpoint.
    """

    id: Ident
    assertions: list[Assertion] = Field(min_length=1)
    preserve: Literal["reload", "navigate"] | None = None
    navigate_to: Route | None = None
    compare_oracle: bool = False
    label: Label | None = None  # public: shown on run pages (recon.model.labels)

    @model_validator(mode="after")
    def _navigate_target(self) -> Checkpoint:
        if (self.preserve == "navigate") != (self.navigate_to is not None):
            raise ValueError(
                "`navigate_to` goes with, and only with, `preserve: navigate`; give both or neither"
            )
        refuse(self.label, self.secrets(), "a selector or expected value of its assertions")
        return self

    def secrets(self) -> list[str | int | None]:
        return [secret for a in self.assertions for secret in a.secrets()]


def _step_kind(value: Any) -> str:
    keys = set(value) if isinstance(value, dict) else set()
    step = isinstance(value, Step) or bool(keys & {"action", *ACTIONS})
    return union_tag("step" if step else "checkpoint")


WorkflowItem = Annotated[
    Annotated[Step, Tag(union_tag("step"))] | Annotated[Checkpoint, Tag(union_tag("checkpoint"))],
    Discriminator(_step_kind),
]
"""A step (it has an action key, ``click: …``) or a checkpoint (``id`` and ``assertions``);
an old-shape step (``action: click``) is a step, refused with how to write it."""


class Workflow(Strict):
    id: Ident
    route: Route = "/"
    viewport: ViewportName = "desktop"
    steps: list[WorkflowItem] = Field(min_length=1, max_length=200)
    weight: Weight = 1.0
    label: Label | None = None  # public: shown on run pages (recon.model.labels)
    discriminates: bool = False  # `recon case validate` requires it to fail on the starter

    @model_validator(mode="after")
    def _has_checkpoint(self) -> Workflow:
        checkpoints = [s.id for s in self.steps if isinstance(s, Checkpoint)]
        if not checkpoints:
            raise ValueError("a workflow needs at least one checkpoint; add one")
        twice = sorted({c for c in checkpoints if checkpoints.count(c) > 1})
        if twice:
            raise ValueError(f"checkpoint ids {twice} are used twice; rename the repeats")
        secrets = [secret for step in self.steps for secret in step.secrets()]
        refuse(self.label, secrets, "a selector or value of its steps")
        return self


class Preservation(Strict):
    """Protected checks that must keep passing after repair or extension work."""

    assertions: list[Assertion] = Field(default_factory=list, max_length=500)
    regions: list[Ident] = Field(default_factory=list, max_length=100)


ViolationKind = Literal[
    "disallowed_host",
    "asset_too_large",
    "total_too_large",
    "source_iframe",
    "remote_hotlink",
    "evidence_as_imagery",
]


class Policy(Strict):
    """Which violations zero the policy dimension and what the others cost.

    ``allowed_hosts`` are hosts besides the render origin the page may request (exact, or
    ``*.example.com`` for subdomains); ``source_hosts`` are the source site's hosts, whose
    framing is ``source_iframe``. Each present kind not in ``zero_on`` costs
    ``penalty[kind]`` (else ``default_penalty``) once. See ``recon.grade.policy``.
    """

    allowed_hosts: list[Host] = Field(default_factory=list, max_length=100)
    max_asset_bytes: int = Field(default=5 * 1024 * 1024, ge=1, le=1 << 30)
    max_total_bytes: int = Field(default=20 * 1024 * 1024, ge=1, le=1 << 32)
    source_hosts: list[Host] = Field(default_factory=list, max_length=100)
    evidence_hash_distance: int = Field(default=10, ge=0, le=64)
    zero_on: list[ViolationKind] = Field(
        default_factory=lambda: ["source_iframe", "evidence_as_imagery"]  # type: ignore[arg-type]
    )
    penalty: dict[ViolationKind, Share] = Field(default_factory=dict)
    default_penalty: Share = 0.25


Pixels = Annotated[int, Field(ge=0, le=4096)]
"""A tolerance in CSS pixels."""


class Thresholds(Strict):
    """Per-case tolerances of the metrics (see the ``recon.grade`` module docstrings). A
    release's calibration may replace any of them (``recon.model.calibration``), within
    the same bounds."""

    text_similarity: Share = 0.9
    position_tolerance_px: Pixels = 24
    overflow_tolerance_px: Pixels = 1
    region_pass: Share = 0.8


ContentTerm = Literal["ssim", "colour", "position", "layout", "palette", "extent", "typeface"]
ImageTerm = Literal["ssim", "colour", "layout", "palette", "extent", "shape"]


class VisualWeights(Strict):
    """Global visual's fit (``recon.grade.global_visual``): the weight of each appearance
    term on each path, and the guard's floors. ``None`` in a grading: the metric's own
    (``global_visual.DEFAULT``); a release's calibration may set it (``recon calibrate fit
    --study``)."""

    content: dict[ContentTerm, Share]  # with both DOM snapshots
    image: dict[ImageTerm, Share]  # without them: workflow checkpoints, canvas pages
    # the guard: below each floor, the score is scaled down in proportion
    coverage_floor: Share = 0.5  # share of the reference's content shown
    span_floor: Share = 1.0  # share of the reference's content bands reached (1: as coverage)
    ink_floor: Share = 0.5  # share of the reference's ink in the view

    @field_validator("content", "image")
    @classmethod
    def _every_term(cls, value: dict[str, float], info: ValidationInfo) -> dict[str, float]:
        terms = get_args(ContentTerm if info.field_name == "content" else ImageTerm)
        missing = [t for t in terms if t not in value]
        if missing:
            raise ValueError(f"no weight for {missing}; write every term out (0 to leave one out)")
        return summing_to_one(value, 1e-6)

    def path(self, name: str) -> dict[str, float]:
        """One path's weights, term -> weight."""
        return {str(k): v for k, v in (self.content if name == "content" else self.image).items()}

    @field_validator("coverage_floor", "span_floor", "ink_floor")
    @classmethod
    def _positive(cls, value: float) -> float:
        if value <= 0:
            raise ValueError("a floor must be above 0 (1: any shortfall scales the score down)")
        return value


ThresholdName = Literal[
    "text_similarity", "position_tolerance_px", "overflow_tolerance_px", "region_pass"
]
THRESHOLDS: tuple[str, ...] = get_args(ThresholdName)
"""The fields of :class:`Thresholds`, in order (a test keeps the two the same)."""


class Grading(Versioned):
    """sealed/grading.yaml."""

    regions: list[Region] = Field(default_factory=list, max_length=100)
    assertions: list[Assertion] = Field(default_factory=list, max_length=500)
    workflows: list[Workflow] = Field(default_factory=list, max_length=50)
    preservation: Preservation = Field(default_factory=Preservation)
    policy: Policy = Field(default_factory=Policy)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    weights: dict[Dimension, Share]  # sealed per case version; the total combines them
    visual: VisualWeights | None = None  # global visual's fit; None: the metric's own

    @field_validator("weights")
    @classmethod
    def _every_dimension(cls, value: dict[str, float]) -> dict[str, float]:
        return summing_to_one(written_out(value), 1e-9)

    @model_validator(mode="after")
    def _consistent(self) -> Grading:
        ids = [a.id for a in self.assertions] + [r.id for r in self.regions]
        ids += [w.id for w in self.workflows] + [a.id for a in self.preservation.assertions]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(
                f"ids must be unique across regions, assertions, workflows and preservation "
                f"assertions: {dupes}; "
                "rename the repeats"
            )
        known = {r.id for r in self.regions}
        missing = [r for r in self.preservation.regions if r not in known]
        if missing:
            raise ValueError(
                f"preservation.regions: unknown region id(s) {missing}; "
                "use ids from regions or fix them"
            )
        return self


def written_out(weights: dict[str, float]) -> dict[str, float]:
    """``weights`` when every dimension has one: a weight of 0 is written out, never assumed
    (a left-out dimension would silently drop out of the total). Refused at
    ``weights.<dimension>``, naming the fix."""
    missing = [name for name in DIMENSIONS if name not in weights]
    if not missing:
        return weights
    problem = "no weight; write `{name}: 0` if it does not count (a weight is never assumed)"
    raise ValidationError.from_exception_data(
        "weights",
        [
            InitErrorDetails(
                type=PydanticCustomError("weight_missing", problem, {"name": name}),
                loc=(name,),
                input=weights,
            )
            for name in missing
        ],
    )


def checkpoint_key(workflow_id: str, checkpoint_id: str, *, preserved: bool = False) -> str:
    """``wf/cp`` for a checkpoint's probe rows, ``wf/cp@preserved`` for its re-check: the
    name the prober writes and the workflow metric reads."""
    return f"{workflow_id}/{checkpoint_id}" + ("@preserved" if preserved else "")


def against_contract(grading: Grading, contract: Contract) -> list[str]:
    """What the sealed checks name that the public contract does not serve, each as
    ``field: problem; fix``: a region or workflow viewport the contract does not list (no
    capture exists there), a workflow route, ``navigate_to`` or ``goto`` not among its routes."""
    viewports = [v.name for v in contract.viewports]
    found = [
        f"regions[{i}].viewport: {r.viewport!r} is not one of the contract's viewports "
        f"{viewports}; use one of them or add it to public/contract.yaml"
        for i, r in enumerate(grading.regions)
        if r.viewport not in viewports
    ]
    for i, wf in enumerate(grading.workflows):
        if wf.viewport not in viewports:
            found.append(
                f"workflows[{i}].viewport: {wf.viewport!r} is not one of the contract's "
                f"viewports {viewports}; use one of them or add it to public/contract.yaml"
            )
        for where, route in _workflow_routes(wf):
            if route not in contract.routes:
                found.append(
                    f"workflows[{i}].{where}: route {route!r} is not one of the contract's routes "
                    f"{contract.routes}; use one of them or add it to public/contract.yaml"
                )
    return found


def _workflow_routes(wf: Workflow) -> list[tuple[str, str]]:
    routes = [("route", wf.route)]
    for j, step in enumerate(wf.steps):
        if isinstance(step, Checkpoint) and step.navigate_to is not None:
            routes.append((f"steps[{j}].navigate_to", step.navigate_to))
        elif isinstance(step, Step) and step.goto is not None:
            routes.append((f"steps[{j}].goto", step.goto))
    return routes
