"""Matrix points and the public evidence still that shows each one.

Evidence stills are named by :func:`recon.model.matrix.evidence_still`; motion is
``motion/<name>.webp`` (animated) beside a frame strip ``motion/<name>.png``. The pages
pair a point with a top-level still only (route ``/`` and the named states): a route's
folder of stills (``about.html/desktop.png``) is not shown yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from recon.model import Contract
from recon.model.matrix import Point, evidence_still, points

Pair = tuple[str | None, str | None]


def match(point: str, names: list[str]) -> str | None:
    """The evidence file of the matrix point ``point`` (an id) among ``names``: its
    :func:`~recon.model.matrix.evidence_still`. A state never borrows the default still,
    nor another route the root's."""
    name = evidence_still(point) if point.count(".") >= 2 else None
    return name if name in names else None


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
    """A matrix point as a case page shows it: the point and its evidence still."""

    point: Point
    evidence: str | None  # the evidence file showing it

    def context(self) -> dict[str, str | int | None]:
        """What the case page's template reads of it."""
        pt = self.point
        vp = pt.viewport
        return {
            "id": pt.id,
            "route": pt.route,
            "viewport": vp.name,
            "width": vp.width,
            "height": vp.height,
            "state": pt.state,
            "evidence": self.evidence,
        }


def matrix(contract: Contract, evidence: Mapping[str, bytes]) -> list[PointView]:
    """Every point of the contract with its evidence still, in the contract's order."""
    names = stills(evidence)
    return [PointView(pt, match(pt.id, names)) for pt in points(contract)]


def motion(evidence: Mapping[str, bytes]) -> list[str]:
    """The animated motion evidence (``motion/<name>.webp``), sorted."""
    return sorted(n for n in evidence if n.startswith("motion/") and n.endswith(".webp"))
