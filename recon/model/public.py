"""What of a grade may leave the store: each dimension's value and its public terms.

A grade table (the grade cell's output, sealed side) keeps every term of every metric and
the arithmetic of the total: each dimension's sealed weight and its product. Any one of
those lets a reader recover a weight (``product / value``, ``weight_sum``, a policy
penalty). The release JSON, the run pages and ``recon diff`` carry only what is listed
here, per dimension: counts of what was checked and measurements of the Candidate's
build. The total is published; how it combines the values (the case's weights) is not.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import get_args

from recon.model.grading import ViolationKind

_POLICY_COUNTS = frozenset(f"count_{kind}" for kind in get_args(ViolationKind))

PUBLIC_TERMS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "global_visual": frozenset({"points", "failed"}),
        "regional_visual": frozenset({"regions"}),
        "functional": frozenset({"assertions"}),
        "responsive": frozenset({"viewports", "mean", "min"}),
        "workflow": frozenset({"workflows"}),
        "preservation": frozenset(
            {"protected", "passed_before", "kept", "broken", "newly_passing", "vacuous"}
        ),
        "policy": _POLICY_COUNTS
        | {
            "zeroed",
            "evidence_images",
            "evidence_informative",
            "images_hashed",
            "inline_images_hashed",
            "painted_boxes_hashed",
            "render_tiles_hashed",
        },
    }
)
"""The allow-list: dimension -> the names of its terms that may be published. Weights,
weight sums, weighted sums, penalties and products are absent on purpose."""


def public_terms(dimension: str, terms: Mapping[str, float]) -> dict[str, float]:
    """The allow-listed terms of ``dimension`` (nothing for an unknown dimension)."""
    allowed = PUBLIC_TERMS.get(dimension, frozenset())
    return {name: float(value) for name, value in sorted(terms.items()) if name in allowed}
