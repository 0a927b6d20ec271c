"""Run pages (``runs/<attempt>.html``): why an attempt scored what it scored.

Outcome and reason; the repeat mean and entry score the attempt feeds; each dimension's
value with its public terms; every functional and workflow check as pass/fail with its
public label (and the Candidate's checkpoint screenshot); for every matrix point the
evidence still, the Candidate's capture and the difference heatmap between them; trace
and egress counts. For an attempt through the model gateway the trace is the gateway's
(calls, turns, tool calls, tokens by kind, cost at the pinned prices and the price table's
digest), with the agent's own report beside it where the two differ, a link to its
transcript, and, when the gateway stopped it at its model budget, why it is excluded. Run
metadata (wall time, the logs' digest) is not here: it changes between builds of the same
inputs, so the page loads it when it is viewed (``data/runs.js``, written by the export).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import blake3

from recon.model.grading import DIMENSIONS
from recon.model.result import AttemptSummary, ReleaseResult
from recon.site.allow import public
from recon.site.heatmap import decode, heatmap_png
from recon.site.points import pairs

AddImage = Callable[[bytes, str], str]
Context = dict[str, Any]


class Heatmaps:
    """Heatmap PNGs by (evidence, capture) bytes: repeats that rendered alike share one."""

    def __init__(self) -> None:
        self._made: dict[tuple[str, str], bytes | None] = {}

    def get(self, evidence: bytes, capture: bytes) -> bytes | None:
        key = (blake3.blake3(evidence).hexdigest(), blake3.blake3(capture).hexdigest())
        if key not in self._made:
            ev, cand = decode(evidence), decode(capture)
            self._made[key] = None if ev is None or cand is None else heatmap_png(ev, cand)
        return self._made[key]


SCORE_TERMS = frozenset({"mean", "min"})
"""Public terms that are scores in [0, 1] (responsive's); every other public term counts."""


def _terms(terms: Mapping[str, float]) -> list[tuple[str, float, str]]:
    """(name, value, format): ``score`` for a score term, ``count`` for a count."""
    return [(k, v, "score" if k in SCORE_TERMS else "count") for k, v in sorted(terms.items())]


def _dimensions(data: Context) -> list[Context]:
    dims = data["dimensions"]
    return [
        {"name": name, "value": dims[name]["value"], "terms": _terms(dims[name]["terms"])}
        for name in DIMENSIONS
        if name in dims
    ]


def _checks(data: Context, shots: Mapping[str, bytes], add: AddImage) -> Context:
    functional = [c for c in data["checks"] if c["dimension"] == "functional"]
    groups: dict[str, list[Context]] = {}
    for check in data["checks"]:
        if check["dimension"] != "workflow":
            continue
        shot = shots.get(check["screenshot"] or "")
        image = add(shot, f"checkpoint {data['id']}: {check['label']}") if shot else None
        groups.setdefault(check["group"] or "", []).append(check | {"image": image})
    return {"functional": functional, "workflows": list(groups.items())}


def _points(
    attempt: AttemptSummary,
    evidence: Mapping[str, bytes],
    captured: Mapping[str, bytes],
    add: AddImage,
    heat: Heatmaps,
) -> list[Context]:
    rows = []
    for name, point in pairs(evidence, captured):
        row: Context = {"point": point, "evidence_name": name}
        row["evidence"] = add(evidence[name], f"evidence {attempt.case}/{name}") if name else None
        row["capture"] = (
            add(captured[point], f"capture {attempt.id}/{point}") if point is not None else None
        )
        row["heatmap"] = None
        if name is not None and point is not None:
            made = heat.get(evidence[name], captured[point])
            row["heatmap"] = add(made, f"heatmap {attempt.id}/{point}") if made else None
        rows.append(row)
    return rows


def _feeds(result: ReleaseResult, attempt: AttemptSummary) -> Context:
    """The repeat mean (entry × case) and the entry score this attempt enters."""
    entry = next((e for e in result.entries if e.entry == attempt.entry), None)
    if entry is None:
        return {"case": None, "entry": None}
    case = next((c for c in entry.cases if c.case == attempt.case), None)
    data = public(entry)
    return {
        "case": public(case) if case is not None else None,
        "entry": {k: data[k] for k in ("score", "se", "ci", "rank", "ranked", "covered")},
    }


MODEL_BUDGET = "model budget: "
"""How the reason of an attempt the gateway stopped at its model budget starts."""


def budget_reason(attempt: AttemptSummary) -> str | None:
    """What of the model budget was spent, when that ended the attempt (a ``timeout``)."""
    if attempt.outcome == "timeout" and attempt.reason.startswith(MODEL_BUDGET):
        return attempt.reason.removeprefix(MODEL_BUDGET)
    return None


def run_page(
    result: ReleaseResult,
    attempt: AttemptSummary,
    evidence: Mapping[str, bytes],
    captured: Mapping[str, bytes],
    shots: Mapping[str, bytes],
    add: AddImage,
    heat: Heatmaps,
) -> Context:
    data = public(attempt)
    return {
        "attempt": data,
        "budget": budget_reason(attempt),
        "dimensions": _dimensions(data),
        "checks": _checks(data, shots, add),
        "points": _points(attempt, evidence, captured, add, heat),
        "feeds": _feeds(result, attempt),
    }
