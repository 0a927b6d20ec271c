"""``recon diff``: what changed between two releases — inputs, cells, scores and ranks.

Cells are matched by kind and name; a cell changed when its key or any output differs.
The report (:mod:`recon.release.diff_report`) says which inputs moved, which cells were
re-keyed because of them, how each entry's score, case scores and rank moved, which
attempts' totals, dimension values, outcomes or tries moved (a slot whose tries moved with
each try's outcome and reason, :mod:`recon.release.tries`), and for every entry whose score
or rank moved the chain input → cells → scores → ranks (:mod:`recon.release.explain`).
Float moves up to ``tolerance`` (default 1e-9) count as unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from recon.errors import ConfigError
from recon.model.records import CellKind, Manifest, ManifestCell
from recon.model.result import AttemptSummary, ReleaseResult
from recon.release.explain import CaseMove, Chain, Changed, causes, passed
from recon.release.sides import load_side
from recon.release.tries import Tries, TryLine, tries_of

__all__ = ["ReleaseDiff", "diff", "load_side"]

Change = Literal["changed", "added", "removed"]
KIND_ORDER = {kind: i for i, kind in enumerate(get_args(CellKind))}
TOLERANCE = 1e-9


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
    """An attempt whose total, a dimension's value, its outcome or its tries moved (values
    only: the weights that combine them are sealed and never in a release JSON). When its
    tries moved, ``history`` holds each side's tries."""

    id: str
    total: Pair
    dimensions: dict[str, Pair] = field(default_factory=dict)
    outcome: tuple[str | None, str | None] | None = None  # when it moved (withdrawn, ...)
    tries: tuple[int, int] | None = None  # when it moved (a harness retry, ...)
    history: tuple[Sequence[TryLine], Sequence[TryLine]] = ((), ())


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
    versions: tuple[int, int] = (1, 1)
    cases: list[CaseMove] = field(default_factory=list)
    chains: list[Chain] = field(default_factory=list)
    tolerance: float = TOLERANCE


# --- comparing -----------------------------------------------------------------------


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


def _differs(old: float | None, new: float | None, tolerance: float) -> bool:
    if old is None or new is None:
        return old is not new
    return abs(new - old) > tolerance


def _score_moves(a: ReleaseResult, b: ReleaseResult, tolerance: float) -> list[ScoreMove]:
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
        if o is None or n is None or o.rank != n.rank or _differs(o.score, n.score, tolerance):
            moves.append(move)
    return moves


def _case_moves(a: ReleaseResult, b: ReleaseResult, tolerance: float) -> list[CaseMove]:
    old = {(e.entry, c.case): c.mean for e in a.entries for c in e.cases}
    new = {(e.entry, c.case): c.mean for e in b.entries for c in e.cases}
    return [
        CaseMove(entry, case, old.get((entry, case)), new.get((entry, case)))
        for entry, case in sorted(old.keys() | new.keys())
        if _differs(old.get((entry, case)), new.get((entry, case)), tolerance)
    ]


def _values(attempt: AttemptSummary | None) -> dict[str, float]:
    return {n: d.value for n, d in attempt.dimensions.items()} if attempt is not None else {}


def _attempt_moves(
    a: ReleaseResult, b: ReleaseResult, tolerance: float, tries: tuple[Tries, Tries]
) -> list[AttemptMove]:
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
            if _differs(was.get(name), now.get(name), tolerance)
        }
        outcome = (o.outcome if o else None, n.outcome if n else None)
        moved = outcome if outcome[0] != outcome[1] else None
        retried = (o.tries, n.tries) if o and n and o.tries != n.tries else None
        history = (tries[0].get(ident, ()), tries[1].get(ident, ())) if retried else ((), ())
        if moved or retried or _differs(total[0], total[1], tolerance) or dims:
            moves.append(AttemptMove(ident, total, dims, moved, retried, history))
    return moves


def _withdrawn_entries(a: ReleaseResult, b: ReleaseResult) -> frozenset[str]:
    """Entries one of whose attempts was withdrawn on one side only."""
    old = {(s.entry, s.id) for s in a.attempts if s.outcome == "withdrawn"}
    new = {(s.entry, s.id) for s in b.attempts if s.outcome == "withdrawn"}
    return frozenset(entry for entry, _ in old ^ new)


def _chains(
    a: tuple[Manifest, ReleaseResult],
    b: tuple[Manifest, ReleaseResult],
    scores: list[ScoreMove],
    cases: list[CaseMove],
    cells: list[CellChange],
) -> list[Chain]:
    changed = Changed(
        a[0].inputs,
        b[0].inputs,
        [(c.kind, c.name) for c in cells],
        _withdrawn_entries(a[1], b[1]),
    )
    old_ranks = {e.entry: e.rank for e in a[1].entries}
    new_ranks = {e.entry: e.rank for e in b[1].entries}
    chains = []
    for move in scores:
        mine = [c for c in cases if c.entry == move.entry]
        found, counts = causes(move.entry, {c.case for c in mine}, changed)
        chains.append(
            Chain(
                entry=move.entry,
                score=(move.old_score, move.new_score),
                rank=(move.old_rank, move.new_rank),
                causes=found,
                cells=counts,
                cases=mine,
                passed=passed(move.entry, old_ranks, new_ranks)
                if move.old_rank != move.new_rank
                else [],
            )
        )
    return chains


def _final(a: ReleaseResult, b: ReleaseResult) -> tuple[Tries, Tries]:
    """Each slot's tries as far as the release JSON says (no store to read back from)."""
    return tries_of(a, lambda digest: None), tries_of(b, lambda digest: None)


def diff(
    a_manifest: Manifest,
    a_result: ReleaseResult,
    b_manifest: Manifest,
    b_result: ReleaseResult,
    tolerance: float = TOLERANCE,
    tries: tuple[Tries, Tries] | None = None,
) -> ReleaseDiff:
    """Everything that differs from release A to release B. ``tries`` are each side's
    slots' tries (:func:`recon.release.tries.tries_of`); without them, a slot's tries are
    the release JSON's alone (its final try)."""
    if not tolerance >= 0:
        raise ConfigError(f"--tolerance {tolerance}: must be a number at least 0, like 1e-9")
    kinds, cells = _cell_diff(a_manifest, b_manifest)
    outputs = _changes(
        {"release_json": a_manifest.release_json, "site": a_manifest.site},
        {"release_json": b_manifest.release_json, "site": b_manifest.site},
    )
    scores = _score_moves(a_result, b_result, tolerance)
    cases = _case_moves(a_result, b_result, tolerance)
    return ReleaseDiff(
        a=a_manifest.release,
        b=b_manifest.release,
        identical=a_manifest == b_manifest,
        inputs=_changes(a_manifest.inputs.flat(), b_manifest.inputs.flat()),
        outputs=outputs,
        kinds=kinds,
        cells=cells,
        scores=scores,
        attempts=_attempt_moves(a_result, b_result, tolerance, tries or _final(a_result, b_result)),
        versions=(a_manifest.version, b_manifest.version),
        cases=cases,
        chains=_chains((a_manifest, a_result), (b_manifest, b_result), scores, cases, cells),
        tolerance=tolerance,
    )
