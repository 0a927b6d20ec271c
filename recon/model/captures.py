"""What the render cells write and the grade and site cells read.

A **capture set** is the tree a capture or oracle cell stores: one folder per matrix point
(``<point id>/``) holding the files named in :class:`PointFiles`, one of which,
``capture.json``, is a :class:`PointCapture`. The **probe results** of a probe cell are one
:class:`ProbeResults` blob, with checkpoint screenshots in a tree beside it
(``<workflow>.<checkpoint>.png``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from recon.model.base import Strict, Versioned

if TYPE_CHECKING:  # only named: a capture record keeps the point flat (PointCapture.of)
    from recon.model.matrix import Point


class NetworkRow(Strict):
    """One request the page made and what the harness did with it."""

    url: str
    outcome: str  # served, missing, blocked... (recon.render.serve)
    path: str | None = None  # the build file a served request was answered with


class Stability(Strict):
    """Whether the full-page still was the same a frame later (recon.render.stills)."""

    status: Literal["stable", "unstable", "unproven"]
    pairs: int = Field(ge=0)  # pairs of stills taken; 0: not proven (the screenshot failed)
    differing_pixels: int = Field(default=0, ge=0)  # in the last pair


class PointCapture(Versioned):
    """``<point>/capture.json``: the status of one matrix point's capture.

    An ``unstable`` capture (its pixels still changed a frame apart after settling) is
    also a ``failure``: its still is an arbitrary frame, so nothing is graded from it.
    """

    point: str  # its id (Point.id); route, viewport name and state repeat the Point's
    route: str
    viewport: str
    state: str
    failure: str | None = None  # why the capture may not show the point it was asked for
    stability: Stability
    console: list[str] = Field(default_factory=list)
    network: list[NetworkRow] = Field(default_factory=list)

    @classmethod
    def of(
        cls,
        point: Point,
        *,
        stability: Stability,
        failure: str | None = None,
        console: list[str] | None = None,
        network: list[NetworkRow] | None = None,
    ) -> PointCapture:
        """The record of ``point``'s capture. The file keeps the point flat (its id, route,
        viewport name and state), as every stored capture set has it: those bytes are
        hashed into the capture trees, and so into the keys and digests after them."""
        return cls(
            point=point.id,
            route=point.route,
            viewport=point.viewport.name,
            state=point.state,
            failure=failure,
            stability=stability,
            console=console or [],
            network=network or [],
        )


class PointFiles:
    """The file names of one point's folder in a capture set."""

    FULL: ClassVar[str] = "full.png"  # the full-page still
    VIEWPORT: ClassVar[str] = "viewport.png"  # the first screen
    DOM: ClassVar[str] = "dom.json"  # the DOM/layout snapshot (recon.render.snapshot)
    RECORD: ClassVar[str] = "capture.json"  # a PointCapture

    @staticmethod
    def path(point: str, name: str) -> str:
        return f"{point}/{name}"


class CheckRow(Strict):
    """One probed check: its id, whether it passed, and what was observed."""

    id: str
    passed: bool
    observed: str = ""


class ProbeResults(Versioned):
    """A probe cell's results: assertions per viewport (the route's default state), the
    protected checks of preservation, rows per workflow checkpoint, and what failed."""

    assertions: dict[str, list[CheckRow]] = Field(default_factory=dict)
    preservation: list[CheckRow] = Field(default_factory=list)
    workflows: dict[str, list[CheckRow]] = Field(default_factory=dict)
    failures: dict[str, str] = Field(default_factory=dict)

    def rows(self) -> dict[str, Any]:
        """Plain rows, as the pure metrics take them."""
        dump = self.model_dump(mode="json")
        return {k: dump[k] for k in ("assertions", "preservation", "workflows", "failures")}


class Skipped(Versioned):
    """What a render, probe or grade cell stores when its attempt has no build to read."""

    skipped: str
