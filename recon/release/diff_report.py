"""The text and JSON forms of a :class:`recon.release.diff.ReleaseDiff` (``recon diff``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from recon.release.diff import KIND_ORDER, AttemptMove, InputChange, Pair, ReleaseDiff
from recon.release.explain import CaseMove, Chain

SHORT = 12


def _short(digest: str | None) -> str:
    if digest is None:
        return "(none)"
    is_digest = len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
    return digest[:SHORT] if is_digest else digest


def _aligned(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    if not rows:
        return [f"{indent}(no changes)"]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _digest_rows(changes: list[InputChange]) -> list[tuple[str, ...]]:
    return [(c.path, c.change, _short(c.old), "->", _short(c.new)) for c in changes]


def _cell_lines(d: ReleaseDiff) -> list[str]:
    lines: list[str] = []
    for kind in d.kinds:
        lines.append(
            f"  {kind.kind}: {kind.changed} changed, {kind.added} added, "
            f"{kind.removed} removed, {kind.unchanged} unchanged"
        )
        rows = [
            (c.name, c.change, _short(c.old_key), "->", _short(c.new_key))
            for c in d.cells
            if c.kind == kind.kind
        ]
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


def _attempt_rows(moves: list[AttemptMove]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for move in moves:
        outcome = ""
        if move.outcome is not None:
            outcome = f"outcome {move.outcome[0] or '(none)'} -> {move.outcome[1] or '(none)'}"
        rows.append((move.id, *_pair("total", move.total), outcome))
        rows.extend(("", *_pair(name, pair), "") for name, pair in move.dimensions.items())
    return rows


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
    lines += ["", "attempts", *_aligned(_attempt_rows(d.attempts))]
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
            }
            for m in d.attempts
        ],
    }


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
