"""Matrix points and the public evidence still that shows each one.

Evidence stills are named by ``recon curate evidence``: ``<viewport>.png`` for route
``/`` in its default state, ``<viewport>--<state>.png`` for a named state; motion is
``motion/<name>.webp`` (animated) beside a frame strip ``motion/<name>.png``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from recon.model import Contract
from recon.project.matrix import points

Pair = tuple[str | None, str | None]


def _stem(name: str) -> str:
    return name.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def match(point: str, names: list[str]) -> str | None:
    """The evidence file for a matrix point ``<route>.<viewport>.<state>``: the same stem,
    else ``<viewport>--<state>.png``, else, for the default state of route ``/`` only,
    ``<viewport>.png``. A state never borrows the default still, nor another route the
    root's."""
    route, viewport, state = ["", "", "", *point.rsplit(".", 2)][-3:]
    wanted = [point, f"{viewport}--{state}"]
    if state == "default":
        wanted = [point, viewport] if route == "root" else [point]
    by_stem = {_stem(name): name for name in names if "/" not in name}
    return next((by_stem[stem] for stem in wanted if stem in by_stem), None)


def stills(evidence: Mapping[str, bytes]) -> list[str]:
    """The evidence stills (top-level ``*.png``), sorted."""
    return sorted(n for n in evidence if "/" not in n and n.lower().endswith(".png"))


def pairs(evidence: Mapping[str, bytes], captured: Mapping[str, bytes]) -> list[Pair]:
    """(evidence name, captured point) rows: captures with their evidence, then the rest."""
    names = stills(evidence)
    rows: list[Pair] = []
    used: set[str] = set()
    for point in sorted(captured):
        name = match(point, names)
        if name is not None:
            used.add(name)
        rows.append((name, point))
    rows.extend((name, None) for name in names if name not in used)
    return rows


@dataclass(frozen=True)
class PointView:
    """A matrix point as a case page names it."""

    id: str
    route: str
    viewport: str
    width: int
    height: int
    state: str
    evidence: str | None  # the evidence file showing it


def matrix(contract: Contract, evidence: Mapping[str, bytes]) -> list[PointView]:
    """Every point of the contract with its evidence still, in the contract's order."""
    names = stills(evidence)
    return [
        PointView(
            pt.id,
            pt.route,
            pt.viewport.name,
            pt.viewport.width,
            pt.viewport.height,
            pt.state,
            match(pt.id, names),
        )
        for pt in points(contract)
    ]


def motion(evidence: Mapping[str, bytes]) -> list[str]:
    """The animated motion evidence (``motion/<name>.webp``), sorted."""
    return sorted(n for n in evidence if n.startswith("motion/") and n.endswith(".webp"))
