"""``recon diff``: what changed between two releases — inputs, cells and scores.

Cells are matched by kind and name; a cell changed when its key or any output differs.
The report says which inputs moved, which cells were re-keyed because of them, and how
each entry's score and rank moved.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from recon.errors import ConfigError
from recon.model.base import load_json
from recon.model.records import CellKind, Manifest, ManifestCell, ReleaseResult

SHORT = 12
Change = Literal["changed", "added", "removed"]
KIND_ORDER = {kind: i for i, kind in enumerate(get_args(CellKind))}
RELEASE_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class InputChange:
    """One input digest: ``path`` like ``cases.home.public``, ``code.grade``,
    ``toolchain.chromium`` (a toolchain fact is shown whole: "Chromium 156... -> 157...")."""

    path: str
    old: str | None
    new: str | None

    @property
    def change(self) -> Change:
        return "added" if self.old is None else "removed" if self.new is None else "changed"


@dataclass(frozen=True)
class CellChange:
    kind: str
    name: str
    change: Change
    old_key: str | None
    new_key: str | None
    outputs: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)


@dataclass(frozen=True)
class KindCount:
    kind: str
    changed: int = 0
    added: int = 0
    removed: int = 0
    unchanged: int = 0


@dataclass(frozen=True)
class ScoreMove:
    entry: str
    old_score: float | None
    new_score: float | None
    old_rank: int | None
    new_rank: int | None

    @property
    def delta(self) -> float | None:
        if self.old_score is None or self.new_score is None:
            return None
        return self.new_score - self.old_score


@dataclass(frozen=True)
class ReleaseDiff:
    a: str
    b: str
    identical: bool
    inputs: list[InputChange]
    outputs: list[InputChange]
    kinds: list[KindCount]
    cells: list[CellChange]
    scores: list[ScoreMove]


# --- loading -------------------------------------------------------------------------


def _manifest_path(arg: str, project_root: Path) -> Path:
    path = Path(arg)
    if path.is_dir():
        return path / "manifest.json"
    if path.suffix == ".json" or "/" in arg or path.exists():
        return path
    if RELEASE_ID.match(arg):
        return project_root / "releases" / arg / "manifest.json"
    raise ConfigError(
        f"{arg}: neither a manifest.json path nor a release id; "
        "pass a path like releases/<id>/manifest.json or a release id like 2025q1"
    )


def load_side(arg: str, project_root: Path) -> tuple[Manifest, ReleaseResult]:
    """Load one side of a diff: a manifest.json path (release.json beside it) or a release id."""
    manifest_path = _manifest_path(arg, project_root)
    result_path = manifest_path.parent / "release.json"
    for path in (manifest_path, result_path):
        if not path.is_file():
            raise ConfigError(
                f"{path}: file not found; build the release with `doit release:<id>` "
                "or pass the path of a folder holding manifest.json and release.json"
            )
    try:
        manifest = load_json(Manifest, manifest_path)
        result = load_json(ReleaseResult, result_path)
    except ConfigError as err:
        raise ConfigError(f"{err}; fix the file or rebuild it with `doit release:<id>`") from None
    if manifest.release != result.release:
        raise ConfigError(
            f"{result_path}: release {result.release!r} does not match {manifest_path} "
            f"(release {manifest.release!r}); rebuild both with `doit release:{manifest.release}`"
        )
    return manifest, result


# --- comparing -----------------------------------------------------------------------


def _flat_inputs(m: Manifest) -> dict[str, str]:
    flat = {"release": m.release, "protocol": m.inputs.protocol}
    flat.update({f"toolchain.{tool}": v for tool, v in m.inputs.toolchain.items()})
    for case, digests in m.inputs.cases.items():
        flat.update({f"cases.{case}.{part}": d for part, d in digests.items()})
    flat.update({f"entries.{entry}": d for entry, d in m.inputs.entries.items()})
    flat.update({f"code.{kind}": d for kind, d in m.inputs.code.items()})
    return flat


def _changes(old: dict[str, str], new: dict[str, str]) -> list[InputChange]:
    return [
        InputChange(path, old.get(path), new.get(path))
        for path in sorted(old.keys() | new.keys())
        if old.get(path) != new.get(path)
    ]


def _cells_by_id(m: Manifest) -> dict[tuple[str, str], ManifestCell]:
    cells: dict[tuple[str, str], ManifestCell] = {}
    for cell in m.cells:
        ident = (cell.kind, cell.name)
        if ident in cells:
            raise ConfigError(
                f"manifest of release {m.release}: cells[{cell.kind} {cell.name}] listed twice; "
                f"rebuild it with `doit release:{m.release}`"
            )
        cells[ident] = cell
    return cells


def _cell_change(old: ManifestCell | None, new: ManifestCell | None) -> CellChange | None:
    cell = new or old
    assert cell is not None
    if old is not None and new is not None and old.key == new.key and old.outputs == new.outputs:
        return None
    a_out = old.outputs if old else {}
    b_out = new.outputs if new else {}
    outputs: dict[str, tuple[str | None, str | None]] = {}
    for slot in sorted(a_out.keys() | b_out.keys()):
        a_ref, b_ref = a_out.get(slot), b_out.get(slot)
        if a_ref != b_ref:
            outputs[slot] = (a_ref.digest if a_ref else None, b_ref.digest if b_ref else None)
    change: Change = "added" if old is None else "removed" if new is None else "changed"
    return CellChange(
        cell.kind, cell.name, change, old.key if old else None, new.key if new else None, outputs
    )


def _cell_diff(a: Manifest, b: Manifest) -> tuple[list[KindCount], list[CellChange]]:
    old, new = _cells_by_id(a), _cells_by_id(b)
    ids = sorted(old.keys() | new.keys(), key=lambda i: (KIND_ORDER.get(i[0], 99), i[0], i[1]))
    changes: list[CellChange] = []
    counts: dict[str, dict[str, int]] = {}
    for ident in ids:
        change = _cell_change(old.get(ident), new.get(ident))
        tally = counts.setdefault(ident[0], {})
        status = change.change if change else "unchanged"
        tally[status] = tally.get(status, 0) + 1
        if change:
            changes.append(change)
    return [KindCount(kind, **tally) for kind, tally in counts.items()], changes


def _score_moves(a: ReleaseResult, b: ReleaseResult) -> list[ScoreMove]:
    old = {e.entry: e for e in a.entries}
    new = {e.entry: e for e in b.entries}
    moves = []
    for name in sorted(old.keys() | new.keys()):
        o, n = old.get(name), new.get(name)
        move = ScoreMove(
            name,
            o.score if o else None,
            n.score if n else None,
            o.rank if o else None,
            n.rank if n else None,
        )
        if o is None or n is None or (o.score, o.rank) != (n.score, n.rank):
            moves.append(move)
    return moves


def diff(
    a_manifest: Manifest, a_result: ReleaseResult, b_manifest: Manifest, b_result: ReleaseResult
) -> ReleaseDiff:
    """Everything that differs from release A to release B."""
    kinds, cells = _cell_diff(a_manifest, b_manifest)
    outputs = _changes(
        {"release_json": a_manifest.release_json, "site": a_manifest.site},
        {"release_json": b_manifest.release_json, "site": b_manifest.site},
    )
    return ReleaseDiff(
        a=a_manifest.release,
        b=b_manifest.release,
        identical=a_manifest == b_manifest,
        inputs=_changes(_flat_inputs(a_manifest), _flat_inputs(b_manifest)),
        outputs=outputs,
        kinds=kinds,
        cells=cells,
        scores=_score_moves(a_result, b_result),
    )


# --- reporting -----------------------------------------------------------------------


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


def render_table(d: ReleaseDiff) -> str:
    """A plain-text report: inputs, cells (per-kind counts, then changed names), scores."""
    title = f"recon diff {d.a} -> {d.b}"
    if d.identical:
        return f"{title}\nidentical\n"
    lines = [title, "", "inputs", *_aligned(_digest_rows(d.inputs))]
    if d.outputs:
        lines += ["", "outputs", *_aligned(_digest_rows(d.outputs))]
    lines += ["", "cells", *_cell_lines(d), "", "scores", *_aligned(_score_rows(d))]
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
        "scores": [{**asdict(m), "delta": m.delta} for m in d.scores],
    }
