"""The route × viewport × state matrix of a contract, as named points, and the name of the
evidence still that shows each point.

Every route is rendered in its implicit ``default`` state at every viewport; every named
state is rendered at each of its viewports (``State.viewports``; every viewport when it
names none), on its own route, after its steps.

:class:`Point` is the one shape of a matrix point: the renderer captures it, the grader's
views, the site's matrix and the curator's evidence name it. What another layer knows
more of a point (a capture's files, a view's pixels, a page's image) sits beside a
``point: Point``, never beside a copy of its route, viewport and state.
"""

from __future__ import annotations

from typing import Any

from recon.model.base import Strict
from recon.model.contract import DEFAULT_STATE, Contract
from recon.model.interaction import Step
from recon.model.viewport import Viewport

ROOT_SLUG = "root"
"""The slug of route ``/`` in a point id."""


class Point(Strict):
    """One matrix point: a route, at a viewport, in a state reached by its steps."""

    route: str
    viewport: Viewport
    state: str = DEFAULT_STATE
    steps: tuple[Step, ...] = ()

    def __init__(self, *fields: Any, **data: Any) -> None:
        """Also positionally, as the matrix is written: ``Point("/", desktop)`` is route,
        viewport (then state, steps)."""
        data.update(zip(("route", "viewport", "state", "steps"), fields, strict=False))
        super().__init__(**data)

    @property
    def id(self) -> str:
        """Stable and path-safe: ``root.desktop.default``, ``blog~post.mobile.menu-open``."""
        slug = ROOT_SLUG if self.route == "/" else route_slug(self.route)
        return f"{slug}.{self.viewport.name}.{self.state}"

    @property
    def evidence_still(self) -> str:
        """The file in ``public/evidence/`` that shows this point (:func:`evidence_still`)."""
        return evidence_still(self.id)

    def params(self) -> dict[str, Any]:
        """The canonical JSON form a cell carries (and hashes into its key)."""
        return {
            "route": self.route,
            "viewport": self.viewport.model_dump(mode="json"),
            "state": self.state,
            "steps": [step.dump() for step in self.steps],
        }

    @classmethod
    def from_params(cls, raw: dict[str, Any]) -> Point:
        return cls.model_validate(raw)


def route_slug(route: str) -> str:
    """A route other than ``/`` as one path-safe name: ``/blog/post/`` -> ``blog~post``.
    It names the route in point ids and its folder of evidence stills."""
    return route.strip("/").replace("/", "~")


def evidence_still(point: str) -> str:
    """The evidence still of the matrix point whose id is ``point``, relative to
    ``public/evidence/`` (what ``recon curate evidence`` writes):

    - ``<viewport>.png``: route ``/`` in its default state;
    - ``<route slug>/<viewport>.png``: any other route in its default state;
    - ``<viewport>--<state>.png``: a named state (state names are unique in a contract).
    """
    slug, viewport, state = point.rsplit(".", 2)
    if state != DEFAULT_STATE:
        return f"{viewport}--{state}.png"
    return f"{viewport}.png" if slug == ROOT_SLUG else f"{slug}/{viewport}.png"


def points(contract: Contract) -> list[Point]:
    defaults = [Point(route, vp) for route in contract.routes for vp in contract.viewports]
    named = [
        Point(state.route, vp, state.name, tuple(state.steps))
        for state in contract.states
        for vp in contract.viewports_of(state)
    ]
    return defaults + named
