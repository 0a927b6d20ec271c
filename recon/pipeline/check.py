"""``recon check``: re-execute a sample of finished cells and compare their outputs.

In the spirit of Nix's ``--check``: a deterministic cell run again from the same inputs
must store the same bytes. Each sampled cell is computed again from its recorded
upstream pointers into a scratch store (reads fall back to the project's store, writes
never reach it), and its output digests are compared with the recorded ones. A cell
whose outputs differ has an undeclared input or is not deterministic.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from recon.errors import ConfigError
from recon.model import Pointer, Ref
from recon.model.kinds import CHECKED_KINDS
from recon.pipeline.cells import input_digests
from recon.pipeline.keys import cell_key
from recon.pipeline.runtime import Cell, Runtime, kind_of, walk
from recon.store import Store, tree_files


class ScratchStore(Store):
    """Writes go to a scratch folder; reads fall back to ``base`` for what it lacks."""

    def __init__(self, root: Path, base: Store) -> None:
        super().__init__(root)
        self.base = base

    def path(self, digest: str) -> Path:
        own = super().path(digest)
        if own.exists():
            return own
        theirs = self.base.path(digest)
        return theirs if theirs.exists() else own


@dataclass(frozen=True)
class Checked:
    cell: str
    verdict: str  # same, different, stale, unbuilt
    took_s: float = 0.0
    outputs: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)  # differing files of differing trees


def sample(root: Cell, kinds: list[str], n: int, seed: int) -> list[Cell]:
    """Up to ``n`` cells of each kind upstream of ``root``, chosen by a seeded RNG."""
    unknown = sorted(set(kinds) - set(CHECKED_KINDS))
    if unknown:
        raise ConfigError(
            f"--kind: {', '.join(unknown)} cannot be checked (choose from "
            f"{', '.join(CHECKED_KINDS)})"
        )
    rng = random.Random(seed)
    chosen: list[Cell] = []
    by_kind: dict[str, list[Cell]] = {}
    for cell in walk([root]):
        by_kind.setdefault(cell.kind, []).append(cell)
    for kind in kinds:
        cells = sorted(by_kind.get(kind, []), key=lambda c: c.name)
        chosen += rng.sample(cells, min(n, len(cells)))
    return chosen


def check(rt: Runtime, cells: list[Cell]) -> Iterator[Checked]:
    """Re-execute each cell into a scratch store; yield how its outputs compare."""
    with scratch_runtime(rt) as scratch:
        for cell in cells:
            yield check_cell(scratch, rt, cell)


def check_cell(scratch: Runtime, rt: Runtime, cell: Cell) -> Checked:
    recorded = rt.read_pointer(cell)
    if recorded is None or recorded.retry or not rt.cache.has(recorded.key):
        return Checked(cell.id, "unbuilt")
    kind = kind_of(cell.kind)
    try:
        inputs = input_digests(rt, cell, _recorded)
    except LookupError:
        return Checked(cell.id, "unbuilt")
    if kind.extra is not None:
        inputs |= kind.extra(scratch, cell)
    if cell_key(cell.kind, rt.code(cell.kind), inputs, cell.params) != recorded.key:
        return Checked(cell.id, "stale")
    started = time.perf_counter()
    produced = kind.compute(scratch, cell, inputs)
    took = round(time.perf_counter() - started, 2)
    outputs = _compare(recorded, produced.outputs)
    if not outputs:
        return Checked(cell.id, "same", took)
    return Checked(cell.id, "different", took, outputs, _files(scratch.store, recorded, outputs))


def _recorded(rt: Runtime, cell: Cell) -> Pointer:
    """An upstream pointer as recorded; a check never runs or heals anything upstream."""
    pointer = rt.read_pointer(cell)
    if pointer is None:
        raise LookupError(cell.id)
    return pointer


def _compare(recorded: Pointer, again: dict[str, Ref]) -> dict[str, tuple[str | None, str | None]]:
    names = sorted(recorded.outputs.keys() | again.keys())
    found: dict[str, tuple[str | None, str | None]] = {}
    for name in names:
        a, b = recorded.outputs.get(name), again.get(name)
        if a != b:
            found[name] = (a.digest if a else None, b.digest if b else None)
    return found


def _files(
    store: Store, recorded: Pointer, outputs: dict[str, tuple[str | None, str | None]]
) -> list[str]:
    """The files that differ between recorded and re-executed trees."""
    differ: list[str] = []
    for name, (a, b) in outputs.items():
        ref = recorded.outputs.get(name)
        if ref is None or ref.type != "tree" or a is None or b is None:
            continue
        old, new = tree_files(store, a), tree_files(store, b)
        for path in sorted(old.keys() | new.keys()):
            x, y = old.get(path), new.get(path)
            if (x.digest if x else None) != (y.digest if y else None):
                differ.append(f"{name}/{path}")
    return differ


@contextmanager
def scratch_runtime(rt: Runtime, prefix: str = "recon-check-") -> Iterator[Runtime]:
    """A runtime like ``rt`` whose store writes into a temporary folder, removed after."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        scratch = Runtime(rt.project)
        scratch.store = ScratchStore(Path(tmp), rt.store)
        try:
            yield scratch
        finally:
            scratch.close()
