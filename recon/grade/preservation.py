"""Preservation score: does repair/extension work leave protected behaviour intact?

The protected checks are the sealed ``preservation`` assertions and regions. The caller
gives, for the build before the change (the starter) and after it (the candidate), which
of them pass: probe rows for assertions, and for regions their regional ``combined``
score against ``thresholds.region_pass`` (see :func:`region_passes`)::

    kept  = protected checks that passed before and pass after
    score = Σ weight(kept) / Σ weight(passed before)

Checks that failed before are not in the denominator (the change could not break
them); ones that pass only after are reported as ``newly_passing`` and not scored.
When nothing protected passed before, there is nothing to break: the score is 1 and
``vacuous`` is recorded as 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from recon.grade.regional import Regional
from recon.grade.result import MetricResult
from recon.model.grading import Preservation, Region

VERSION = "preservation/1"


@dataclass(frozen=True)
class PreservationScore(MetricResult):
    version: str = VERSION


def region_passes(regional: Regional, threshold: float) -> dict[str, bool]:
    """Region id -> its combined regional score reaches ``threshold``."""
    return {str(r["id"]): float(r["combined"]) >= threshold for r in regional.rows}


def score(
    preservation: Preservation,
    regions: Sequence[Region],
    before: Mapping[str, bool],
    after: Mapping[str, bool],
) -> PreservationScore:
    """``before``/``after`` map assertion and region ids to whether they passed."""
    region_weight = {r.id: r.weight for r in regions}
    checks = [(a.id, "assertion", a.weight) for a in preservation.assertions]
    checks += [(rid, "region", region_weight[rid]) for rid in preservation.regions]
    states = [(i, k, w, before.get(i, False), after.get(i, False)) for i, k, w in checks]
    rows: list[dict[str, Any]] = [
        {"id": i, "kind": k, "weight": w, "before": b, "after": a} for i, k, w, b, a in states
    ]
    denominator = sum(w for _, _, w, b, _ in states if b)
    kept = sum(w for _, _, w, b, a in states if b and a)
    vacuous = denominator <= 0
    value = 1.0 if vacuous else kept / denominator
    terms = {
        "protected": float(len(states)),
        "passed_before": float(sum(1 for s in states if s[3])),
        "kept": float(sum(1 for s in states if s[3] and s[4])),
        "broken": float(sum(1 for s in states if s[3] and not s[4])),
        "newly_passing": float(sum(1 for s in states if s[4] and not s[3])),
        "weight_before": float(denominator),
        "weight_kept": float(kept),
        "vacuous": float(vacuous),
        "score": value,
    }
    return PreservationScore(score=value, rows=rows, terms=terms)
