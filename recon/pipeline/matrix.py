"""The route × viewport × state matrix of a contract, as named points."""

from __future__ import annotations

from dataclasses import dataclass

from recon.model import Contract, Viewport


@dataclass(frozen=True)
class Point:
    route: str
    viewport: Viewport
    state: str

    @property
    def id(self) -> str:
        slug = "root" if self.route == "/" else self.route.strip("/").replace("/", "~")
        return f"{slug}.{self.viewport.name}.{self.state}"


def points(contract: Contract) -> list[Point]:
    return [
        Point(route, viewport, state.name)
        for route in contract.routes
        for viewport in contract.viewports
        for state in contract.states
    ]
