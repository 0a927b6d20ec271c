"""The text and JSON forms of a :class:`recon.release.diff.ReleaseDiff` (``recon diff``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from recon.release.diff import (
    KIND_ORDER,
    AttemptMove,
    CellChange,
    InputChange,
    Pair,
    ReleaseDiff,
)
from recon.release.explain import CaseMove, Chain
from recon.release.tries import TryLine

SHORT = 12


def _is_digest(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


def _short(digest: str | None, length: int = SHORT) -> str:
    if digest is None:
        return "(none)"
    return digest[:length] if _is_digest(digest) else digest


def _shorts(old: str | None, new: str | None) -> tuple[str, str]:
    """Both digests cut at the same length, long enough to differ when they do: the
    shortest prefix at which they differ, at least ``SHORT`` characters."""
    length = SHORT
    if old and new and old != new and _is_digest(old) and _is_digest(new):
        first = next(i for i, (x, y) in enumerate(zip(old, new, strict=True)) if x != y)
        length = max(SHORT, first + 1)
    return _short(old, length), _short(new, length)


def _aligned(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    if not rows:
        return [f"{indent}(no changes)"]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _digest_rows(changes: list[InputChange]) -> list[tuple[str, ...]]:
    return [(c.path, c.change, *_arrow(c.old, c.new)) for c in changes]


def _arrow(old: str | None, new: str | None) -> tuple[str, str, str]:
    a, b = _shorts(old, new)
    return a, "->", b


def _cell_rows(c: CellChange) -> list[tuple[str, ...]]:
    """The key's move; when the key stayed, each output that moved under it (a retried
    attempt: same inputs, another record)."""
    if c.old_key != c.new_key or not c.outputs:
        return [(c.name, c.change, *_arrow(c.old_key, c.new_key), "")]
    same = f"(same key {_short(c.old_key)})"
    return [
        (c.name, c.change, *_arrow(old, new), f"{slot} {same}")
        for slot, (old, new) in c.outputs.items()
    ]


def _cell_lines(d: ReleaseDiff) -> list[str]:
    lines: list[str] = []
    for kind in d.kinds:
        lines.append(
            f"  {kind.kind}: {kind.changed} changed, {kind.added} added, "
            f"{kind.removed} removed, {kind.unchanged} unchanged"
        )
        rows = [row for c in d.cells if c.kind == kind.kind for row in _cell_rows(c)]
        if rows:
            lines.extend(_aligned(rows, "      "))
    return lines or ["  (no cells)"]


def _num(value: float | int | None, fmt: str = ".4f") -> str:
    if value is None:
        return "—"
    return format(value, fmt) if isinstance(value, float) else str(value)


def _score_rows(d: ReleaseDiff) -> list[tuple[str, ...]]:
    header = ("entry", "score", "", "", "delta", "rank", "", "")
    rows = [
        (
            m.entry,
            _num(m.old_score),
            "->",
            _num(m.new_score),
            _num(m.delta, "+.4f"),
            _num(m.old_rank),
            "->",
            _num(m.new_rank),
        )
        for m in d.scores
    ]
    return [header, *rows] if rows else []


def _pair(label: str, pair: Pair) -> tuple[str, ...]:
    old, new = pair
    delta = new - old if old is not None and new is not None else None
    return (label, _num(old), "->", _num(new), _num(delta, "+.4f"))


def _attempt_rows(move: AttemptMove) -> list[tuple[str, ...]]:
    outcome = ""
    if move.outcome is not None:
        outcome = f"outcome {move.outcome[0] or '(none)'} -> {move.outcome[1] or '(none)'}"
    rows = [(move.id, *_pair("total", move.total), outcome)]
    rows.extend(("", *_pair(name, pair), "") for name, pair in move.dimensions.items())
    if move.tries is not None:
        rows.append(("", "tries", str(move.tries[0]), "->", str(move.tries[1]), "", ""))
    return rows


def _attempt_lines(moves: list[AttemptMove]) -> list[str]:
    """Each moved attempt's rows (aligned across attempts), then, when its tries moved,
    each side's tries: outcome, which was retried, and its reason."""
    rows = [_attempt_rows(m) for m in moves]
    aligned = iter(_aligned([row for block in rows for row in block]))
    lines: list[str] = []
    for move, block in zip(moves, rows, strict=True):
        lines.extend(next(aligned) for _ in block)
        if move.tries is not None:
            sides = zip(("before", "after"), move.history, strict=True)
            tried = [_try_row(side, t) for side, tries in sides for t in tries]
            lines.extend(_aligned(tried, "      ") if tried else [])
    return lines or _aligned([])


def _try_row(side: str, t: TryLine) -> tuple[str, ...]:
    role = "retried" if t.retried else f"retry of try {t.index - 1}" if t.index else ""
    return (side, f"try {t.index}", t.outcome or "(unknown)", role, t.reason)


def _case_rows(moves: list[CaseMove]) -> list[tuple[str, ...]]:
    return [(m.entry, m.case, *_pair("", (m.old, m.new))[1:]) for m in moves]


def _signed(value: float | None) -> str:
    return "—" if value is None else format(value, "+.4f").replace("-", "−")


def chain_line(chain: Chain) -> str:
    """``code.grade changed → 6 grade, 1 aggregate cells → scripted-starter −0.0120 on
    todomvc → rank 2 → 3``."""
    if chain.causes:
        why = ", ".join(f"{c.path} {_change(c.old, c.new)}" for c in chain.causes)
    else:
        why = "no input of its own"
    cells = ", ".join(f"{n} {kind}" for kind, n in sorted(chain.cells.items(), key=_dag_order))
    moved = ", ".join(_case_move(m) for m in chain.cases)
    old, new = chain.score
    score = f"score {_num(old)} -> {_num(new)}"
    rank = f"rank {_num(chain.rank[0])} → {_num(chain.rank[1])}"
    if chain.rank[0] == chain.rank[1]:
        rank = f"rank {_num(chain.rank[0])} (unchanged)"
    if chain.passed:
        rank += f" (order flipped with {', '.join(chain.passed)})"
    parts = [why, f"{cells} cells" if cells else "no cell of its own"]
    parts += [f"{chain.entry} {moved}" if moved else f"{chain.entry}: {score}", rank]
    return " → ".join(parts)


def _dag_order(item: tuple[str, int]) -> int:
    return KIND_ORDER.get(item[0], len(KIND_ORDER))


def _case_move(m: CaseMove) -> str:
    if m.delta is None:
        return f"{_num(m.old)} -> {_num(m.new)} on {m.case}"
    return f"{_signed(m.delta)} on {m.case}"


def _change(old: str | None, new: str | None) -> str:
    return "added" if old is None else "removed" if new is None else "changed"


def render_table(d: ReleaseDiff) -> str:
    """A plain-text report: inputs, cells (per-kind counts, then changed names), scores,
    case scores, the chain of every moved score or rank, then attempts whose total or
    dimension values moved."""
    title = f"recon diff {d.a} -> {d.b}"
    if d.versions[0] != d.versions[1]:
        title += f"  (manifest version {d.versions[0]} -> {d.versions[1]})"
    if d.identical:
        return f"{title}\nidentical\n"
    lines = [title, "", "inputs", *_aligned(_digest_rows(d.inputs))]
    if d.outputs:
        lines += ["", "outputs", *_aligned(_digest_rows(d.outputs))]
    lines += ["", "cells", *_cell_lines(d), "", "scores", *_aligned(_score_rows(d))]
    lines += ["", "case scores", *_aligned(_case_rows(d.cases))]
    lines += ["", "why", *[f"  {chain_line(c)}" for c in d.chains]]
    if not d.chains:
        lines.append("  (no score or rank moved)")
    lines += ["", "attempts", *_attempt_lines(d.attempts)]
    lines += ["", f"(float moves up to {d.tolerance:g} count as unchanged)"]
    return "\n".join(lines) + "\n"


def to_json(d: ReleaseDiff) -> dict[str, Any]:
    """The diff as plain JSON data (full digests), for ``recon diff --json``."""
    return {
        "a": d.a,
        "b": d.b,
        "identical": d.identical,
        "inputs": [{**asdict(c), "change": c.change} for c in d.inputs],
        "outputs": [{**asdict(c), "change": c.change} for c in d.outputs],
        "cells": {
            "kinds": {
                k.kind: {
                    "changed": k.changed,
                    "added": k.added,
                    "removed": k.removed,
                    "unchanged": k.unchanged,
                }
                for k in d.kinds
            },
            "changes": [
                {**asdict(c), "outputs": {s: list(v) for s, v in c.outputs.items()}}
                for c in d.cells
            ],
        },
        "versions": list(d.versions),
        "tolerance": d.tolerance,
        "scores": [{**asdict(m), "delta": m.delta} for m in d.scores],
        "cases": [{**asdict(m), "delta": m.delta} for m in d.cases],
        "chains": [_chain_json(c) for c in d.chains],
        "attempts": [
            {
                "id": m.id,
                "total": list(m.total),
                "dimensions": {k: list(v) for k, v in m.dimensions.items()},
                "outcome": list(m.outcome) if m.outcome else None,
                "tries": _tries_json(m),
            }
            for m in d.attempts
        ],
    }


def _tries_json(m: AttemptMove) -> dict[str, Any] | None:
    """``{"count": [1, 2], "a": [...], "b": [...]}`` when the slot's tries moved."""
    if m.tries is None:
        return None
    a, b = ([asdict(t) for t in side] for side in m.history)
    return {"count": list(m.tries), "a": a, "b": b}


def _chain_json(chain: Chain) -> dict[str, Any]:
    return {
        "entry": chain.entry,
        "causes": [asdict(c) for c in chain.causes],
        "cells": dict(sorted(chain.cells.items())),
        "cases": [{**asdict(m), "delta": m.delta} for m in chain.cases],
        "score": list(chain.score),
        "rank": list(chain.rank),
        "passed": chain.passed,
        "text": chain_line(chain),
    }
