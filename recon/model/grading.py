"""Sealed evaluation formats (never shown to a Candidate): regions, functional assertions,
workflows, preservation checks, policy rules, thresholds and per-dimension weights."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import Field, field_validator, model_validator

from recon.model.base import Strict, Versioned

Ident = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$", max_length=64)]
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
LOCATOR_KINDS = ({"role"}, {"role", "name"}, {"label"}, {"text"}, {"test_id"}, {"css"})


class Locator(Strict):
    """How a sealed check finds an element: accessible role/name, label, text, test id or css."""

    role: str | None = None
    name: str | None = None
    label: str | None = None
    text: str | None = None
    test_id: str | None = None
    css: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Locator:
        given = {k for k, v in self.model_dump().items() if v is not None}
        if given not in LOCATOR_KINDS:
            raise ValueError(
                "a locator is one of {role[, name]}, {label}, {text}, {test_id}, {css}; "
                f"got {sorted(given) or 'nothing'}"
            )
        return self


Expect = Literal["visible", "hidden", "count", "text", "attribute", "value", "css"]


class Assertion(Strict):
    """A locator plus an expectation. ``attribute`` and ``css`` name what they read."""

    id: Ident
    locator: Locator
    expect: Expect
    name: str | None = None
    value: str | int | None = None
    weight: float = Field(default=1.0, gt=0)

    @model_validator(mode="after")
    def _complete(self) -> Assertion:
        if self.expect in ("attribute", "css") and not self.name:
            raise ValueError(f"expect {self.expect} needs `name` (the attribute or CSS property)")
        if self.expect in ("count", "text", "attribute", "value", "css") and self.value is None:
            raise ValueError(f"expect {self.expect} needs `value`")
        return self


class Region(Strict):
    """A high-value region: a selector resolved in the reference, or a fixed box."""

    id: Ident
    selector: str | None = None
    box: tuple[int, int, int, int] | None = None  # x, y, width, height in reference pixels
    viewport: str = "desktop"
    weight: float = Field(default=1.0, gt=0)

    @model_validator(mode="after")
    def _one_of(self) -> Region:
        if (self.selector is None) == (self.box is None):
            raise ValueError("give exactly one of `selector` or `box`")
        if self.box is not None and (self.box[2] <= 0 or self.box[3] <= 0):
            raise ValueError("box width and height must be positive")
        return self


class Step(Strict):
    """One interaction of a sealed workflow."""

    action: Literal["click", "fill", "press", "hover", "scroll", "wait_for", "goto", "reload"]
    locator: Locator | None = None
    value: str | None = None

    @model_validator(mode="after")
    def _needs(self) -> Step:
        if self.action in ("click", "fill", "hover", "wait_for") and self.locator is None:
            raise ValueError(f"{self.action} needs a locator")
        if self.action in ("fill", "press", "goto") and self.value is None:
            raise ValueError(f"{self.action} needs `value`")
        return self


class Checkpoint(Strict):
    """Assertions that must hold at this point of a workflow.

    ``preserve: reload`` or ``navigate`` re-checks them after a reload or a navigation
    (state kept in localStorage, say). ``compare_oracle`` also compares the screenshot
    with the oracle's capture at the same checkpoint.
    """

    id: Ident
    assertions: list[Assertion] = Field(min_length=1)
    preserve: Literal["reload", "navigate"] | None = None
    navigate_to: str | None = None
    compare_oracle: bool = False

    @model_validator(mode="after")
    def _navigate_target(self) -> Checkpoint:
        if (self.preserve == "navigate") != (self.navigate_to is not None):
            raise ValueError("`navigate_to` goes with, and only with, `preserve: navigate`")
        return self


class Workflow(Strict):
    id: Ident
    route: str = "/"
    viewport: str = "desktop"
    steps: list[Step | Checkpoint] = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)

    @model_validator(mode="after")
    def _has_checkpoint(self) -> Workflow:
        if not any(isinstance(s, Checkpoint) for s in self.steps):
            raise ValueError("a workflow needs at least one checkpoint")
        return self


class Preservation(Strict):
    """Protected checks that must keep passing after repair or extension work."""

    assertions: list[Assertion] = Field(default_factory=list)
    regions: list[Ident] = Field(default_factory=list)


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

    allowed_hosts: list[str] = Field(default_factory=list)
    max_asset_bytes: int = Field(default=5 * 1024 * 1024, ge=1)
    max_total_bytes: int = Field(default=20 * 1024 * 1024, ge=1)
    source_hosts: list[str] = Field(default_factory=list)
    evidence_hash_distance: int = Field(default=10, ge=0, le=64)
    zero_on: list[ViolationKind] = Field(
        default_factory=lambda: ["source_iframe", "evidence_as_imagery"]  # type: ignore[arg-type]
    )
    penalty: dict[ViolationKind, float] = Field(default_factory=dict)
    default_penalty: float = Field(default=0.25, ge=0, le=1)


class Thresholds(Strict):
    """Per-case tolerances of the metrics (see the ``recon.grade`` module docstrings)."""

    text_similarity: float = Field(default=0.9, ge=0, le=1)
    position_tolerance_px: int = Field(default=24, ge=0)
    overflow_tolerance_px: int = Field(default=1, ge=0)
    region_pass: float = Field(default=0.8, ge=0, le=1)


class Grading(Versioned):
    """sealed/grading.yaml."""

    regions: list[Region] = Field(default_factory=list)
    assertions: list[Assertion] = Field(default_factory=list)
    workflows: list[Workflow] = Field(default_factory=list)
    preservation: Preservation = Field(default_factory=Preservation)
    policy: Policy = Field(default_factory=Policy)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    weights: dict[Dimension, float]

    @field_validator("weights")
    @classmethod
    def _sum_to_one(cls, value: dict[str, float]) -> dict[str, float]:
        if any(w < 0 for w in value.values()):
            raise ValueError("weights must not be negative")
        total = sum(value.values())
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"weights must sum to 1, they sum to {total:g}; rescale them")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Grading:
        ids = [a.id for a in self.assertions] + [r.id for r in self.regions]
        ids += [w.id for w in self.workflows]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(
                f"ids must be unique across regions, assertions and workflows: {dupes}"
            )
        known = {r.id for r in self.regions}
        missing = [r for r in self.preservation.regions if r not in known]
        if missing:
            raise ValueError(f"preservation.regions: unknown region id(s) {missing}")
        return self


def checkpoint_key(workflow_id: str, checkpoint_id: str, *, preserved: bool = False) -> str:
    """``wf/cp`` for a checkpoint's probe rows, ``wf/cp@preserved`` for its re-check: the
    name the prober writes and the workflow metric reads."""
    return f"{workflow_id}/{checkpoint_id}" + ("@preserved" if preserved else "")
