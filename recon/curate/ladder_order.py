"""Is a case's validity ladder ordered? Pure: grade tables in, breaks and a table out.

The ladder (:mod:`recon.curate.ladder`) is ordered when

- the reference scores exactly 1.0 on every dimension, and at least the faithful answer;
- each step below scores a strictly lower total than the step above it, and is strictly
  lower on at least one of the dimensions its defect targets (:data:`TARGETS`);
- each cheat (evidence as imagery) fails policy with ``evidence_as_imagery``, scores less
  than the faithful answer and gets at most half the regional credit.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from recon.model.grading import DIMENSIONS

TARGETS: Mapping[str, tuple[str, ...]] = {
    "recoloured": ("regional_visual",),
    "shifted": ("regional_visual", "global_visual"),
    "missing": ("functional", "regional_visual"),
    "blank": ("global_visual",),
}
"""What each defect must cost: one of these dimensions, strictly below the step above."""
CHEAT_REGIONAL_MAX = 0.5

Grades = Mapping[str, Mapping[str, Any]]  # variant -> grade table (total, dimensions, details)


@dataclass(frozen=True)
class Break:
    """Where the order breaks: the step, the dimension (or ``total``) and what was seen."""

    step: str
    dimension: str
    what: str

    def line(self, case: str) -> str:
        return f"{case}: ladder step {self.step!r}, {self.dimension}: {self.what}"


def breaks(steps: Sequence[str], cheats: Sequence[str], grades: Grades) -> list[Break]:
    """Every place the ladder ``steps`` (top first) and ``cheats`` break the order."""
    found = [
        Break("reference", d, f"scores {_dim(grades, 'reference', d):.6f}, not 1.0")
        for d in DIMENSIONS
        if _dim(grades, "reference", d) != 1.0
    ]
    if _total(grades, "reference") < _total(grades, "faithful"):
        found.append(Break("faithful", "total", "scores above the reference"))
    for upper, lower in pairwise([s for s in steps if s != "reference"]):
        if not _total(grades, upper) > _total(grades, lower):
            low, up = _total(grades, lower), _total(grades, upper)
            found.append(Break(lower, "total", f"{low:.3f} is not below {upper}'s {up:.3f}"))
        targets = TARGETS.get(lower, ())
        if targets and not any(_dim(grades, upper, d) > _dim(grades, lower, d) for d in targets):
            found.append(Break(lower, "/".join(targets), f"costs none of them against {upper}"))
    for cheat in cheats:
        found += _cheat(cheat, grades)
    return found


def _cheat(cheat: str, grades: Grades) -> list[Break]:
    found = []
    if _dim(grades, cheat, "policy") >= 1.0:
        found.append(Break(cheat, "policy", "passes policy"))
    details = json.dumps(grades.get(cheat, {}).get("details", {}).get("policy", {}))
    if "evidence_as_imagery" not in details:
        found.append(Break(cheat, "policy", "evidence_as_imagery is not reported"))
    if not _total(grades, cheat) < _total(grades, "faithful"):
        found.append(Break(cheat, "total", "is not below faithful"))
    if _dim(grades, cheat, "regional_visual") > CHEAT_REGIONAL_MAX:
        found.append(
            Break(cheat, "regional_visual", f"above {CHEAT_REGIONAL_MAX} for a screenshot")
        )
    return found


def table(case: str, grades: Grades) -> str:
    """Totals and every dimension per variant, in the order given."""
    dims = sorted({d for g in grades.values() for d in g.get("dimensions", {})})
    lines = [f"ladder of {case}", "  " + " ".join([f"{'variant':20}", f"{'total':>6}", *dims])]
    for name in grades:
        values = [f"{_dim(grades, name, d):>{len(d)}.3f}" for d in dims]
        lines.append("  " + " ".join([f"{name:20}", f"{_total(grades, name):6.3f}", *values]))
    return "\n".join(lines)


def _total(grades: Grades, name: str) -> float:
    value = grades.get(name, {}).get("total")
    return float(value) if value is not None else math.nan


def _dim(grades: Grades, name: str, dim: str) -> float:
    value = grades.get(name, {}).get("dimensions", {}).get(dim)
    return float(value) if value is not None else math.nan
