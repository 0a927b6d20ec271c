"""``recon site diff A B``: the ``recon diff`` of two releases as one self-contained page.

It renders the chain input → cells → scores → ranks of every moved score or rank, then
the detail: the inputs that changed, the cells re-keyed per kind (by key only: no output
digest, so nothing of a sealed-side cell's output shows), entry scores and ranks, case
scores, and the attempts whose total, dimension values, outcome or tries moved (a retried
slot with each side's tries). One HTML file with its stylesheet inline: no request of any
kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from markupsafe import Markup

from recon.release.diff import KIND_ORDER, AttemptMove, ReleaseDiff
from recon.release.diff_report import chain_line
from recon.site.render import asset, page

Context = dict[str, Any]


def _pair(old: float | None, new: float | None) -> Context:
    delta = None if old is None or new is None else new - old
    return {"old": old, "new": new, "delta": delta}


def _attempts(moves: Sequence[AttemptMove]) -> list[Context]:
    return [
        {
            "id": m.id,
            "total": _pair(*m.total),
            "dimensions": [(name, _pair(*pair)) for name, pair in m.dimensions.items()],
            "outcome": list(m.outcome) if m.outcome else None,
            "tries": list(m.tries) if m.tries else None,
            "history": [
                (side, [vars(t) for t in tries])
                for side, tries in zip(("before", "after"), m.history, strict=True)
            ],
        }
        for m in moves
    ]


def diff_context(d: ReleaseDiff) -> Context:
    kinds = sorted(d.kinds, key=lambda k: KIND_ORDER.get(k.kind, len(KIND_ORDER)))
    return {
        "a": d.a,
        "b": d.b,
        "versions": list(d.versions),
        "identical": d.identical,
        "tolerance": f"{d.tolerance:g}",
        "inputs": [vars(c) | {"change": c.change} for c in d.inputs],
        "outputs": [vars(c) | {"change": c.change} for c in d.outputs],
        "kinds": [
            vars(k) | {"cells": [vars(c) for c in d.cells if c.kind == k.kind]} for k in kinds
        ],
        "scores": [
            {
                "entry": m.entry,
                "score": _pair(m.old_score, m.new_score),
                "rank": (m.old_rank, m.new_rank),
            }
            for m in d.scores
        ],
        "cases": [
            {"entry": m.entry, "case": m.case, "score": _pair(m.old, m.new)} for m in d.cases
        ],
        "chains": [
            {
                "entry": c.entry,
                "text": chain_line(c),
                "causes": [vars(x) for x in c.causes],
                "cells": sorted(c.cells.items(), key=lambda kv: KIND_ORDER.get(kv[0], 99)),
                "cases": [{"case": m.case, "score": _pair(m.old, m.new)} for m in c.cases],
                "score": _pair(*c.score),
                "rank": list(c.rank),
                "passed": c.passed,
            }
            for c in d.chains
        ],
        "attempts": _attempts(d.attempts),
    }


def diff_page(d: ReleaseDiff) -> bytes:
    """The page, stylesheet inline."""
    style = Markup(asset("style.css").decode("utf-8"))
    return page("diff.html", {"d": diff_context(d), "style": style})
