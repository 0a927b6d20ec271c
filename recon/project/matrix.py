"""The route × viewport × state matrix of a contract, as named points.

Every route is rendered in its implicit ``default`` state at every viewport; every named
state is rendered at each of its viewports (``State.viewports``; every viewport when it
names none), on its own route, after its steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recon.model import Contract, Viewport
from recon.model.contract import DEFAULT_STATE
from recon.model.interaction import Step


@dataclass(frozen=True)
class Point:
    route: str
    viewport: Viewport
    state: str = DEFAULT_STATE
    steps: tuple[Step, ...] = ()

    @property
    def id(self) -> str:
        """Stable and path-safe: ``root.desktop.default``, ``blog~post.mobile.menu-open``."""
        slug = "root" if self.route == "/" else self.route.strip("/").replace("/", "~")
        return f"{slug}.{self.viewport.name}.{self.state}"

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
        return cls(
            raw["route"],
            Viewport.model_validate(raw["viewport"]),
            raw["state"],
            tuple(Step.model_validate(s) for s in raw.get("steps", [])),
        )


def points(contract: Contract) -> list[Point]:
    defaults = [Point(route, vp) for route in contract.routes for vp in contract.viewports]
    named = [
        Point(state.route, vp, state.name, tuple(state.steps))
        for state in contract.states
        for vp in contract.viewports_of(state)
    ]
    return defaults + named
