"""``recon diff``: what changed between two releases — inputs, cells and scores.

Cells are matched by kind and name; a cell changed when its key or any output differs.
The report (:mod:`recon.release.diff_report`) says which inputs moved, which cells were
re-keyed because of them, how each entry's score and rank moved, and which attempts' totals
and dimension values moved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from recon.errors import ConfigError
from recon.model.base import load_json
from recon.model.records import AttemptSummary, CellKind, Manifest, ManifestCell, ReleaseResult

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


Pair = tuple[float | None, float | None]


@dataclass(frozen=True)
class AttemptMove:
    """An attempt whose total or a dimension's value moved (values only: the weights that
    combine them are sealed and never in a release JSON)."""

    id: str
    total: Pair
    dimensions: dict[str, Pair] = field(default_factory=dict)


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
    attempts: list[AttemptMove] = field(default_factory=list)


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


def _values(attempt: AttemptSummary | None) -> dict[str, float]:
    return {n: d.value for n, d in attempt.dimensions.items()} if attempt is not None else {}


def _attempt_moves(a: ReleaseResult, b: ReleaseResult) -> list[AttemptMove]:
    old = {s.id: s for s in a.attempts}
    new = {s.id: s for s in b.attempts}
    moves = []
    for ident in sorted(old.keys() | new.keys()):
        o, n = old.get(ident), new.get(ident)
        total = (o.total if o else None, n.total if n else None)
        was, now = _values(o), _values(n)
        dims = {
            name: (was.get(name), now.get(name))
            for name in sorted(was.keys() | now.keys())
            if was.get(name) != now.get(name)
        }
        if o is None or n is None or total[0] != total[1] or dims:
            moves.append(AttemptMove(ident, total, dims))
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
        attempts=_attempt_moves(a_result, b_result),
    )
