"""Why an entry's score or rank moved: input → cells → scores → ranks (``recon diff``).

For each entry whose score or rank moved, the chain names the inputs that changed and
reach it (causes), the changed cells on its path (its own attempts, captures, probes and
grades, the case-level cells of the cases it moved on, the aggregate), its case scores
that moved, and its rank move with the entries it passed or was passed by. Pure.

Causes are told apart: a kind's code digest moves with its source files (``code.<kind>``,
when ``inputs.sources`` moved) or with a toolchain fact it runs on (``toolchain.chromium``,
per ``inputs.tools``); a sealed grading moves with its checks (``cases.<c>.checks``) or
only its calibration, the weights and thresholds (``cases.<c>.calibration``); a release's
named calibration (``releases/calibrations/<id>.yaml``) is ``calibration``, the cause of
every grade it moved; an image is ``images.<backend>``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from recon.model import ManifestInputs
from recon.model.kinds import ATTEMPT_KINDS, CASE_KINDS


@dataclass(frozen=True)
class Cause:
    path: str
    kind: str  # code, toolchain, calibration, checks, case, entry, protocol, image, ...
    old: str | None
    new: str | None


@dataclass(frozen=True)
class CaseMove:
    entry: str
    case: str
    old: float | None
    new: float | None

    @property
    def delta(self) -> float | None:
        return None if self.old is None or self.new is None else self.new - self.old


@dataclass(frozen=True)
class Chain:
    entry: str
    score: tuple[float | None, float | None]
    rank: tuple[int | None, int | None]
    causes: list[Cause]
    cells: dict[str, int]  # kind -> changed cells on the entry's path
    cases: list[CaseMove]
    passed: list[str] = field(default_factory=list)  # entries whose order with it flipped


@dataclass(frozen=True)
class Changed:
    """What the chains are built from: the two manifests' inputs, the changed cells
    (kind, name) and the entries whose attempts' withdrawal moved."""

    old: ManifestInputs
    new: ManifestInputs
    cells: Sequence[tuple[str, str]]
    withdrawn: frozenset[str] = frozenset()


def _kind_of(path: str) -> str:
    head, _, rest = path.partition(".")
    if head == "cases":
        part = rest.rpartition(".")[2]
        return part if part in ("calibration", "checks") else "case"
    labels = {"code": "code", "entries": "entry", "images": "image"}
    if head == "toolchain":
        return "chromium" if rest == "chromium" else "toolchain"
    return labels.get(head, head)


def _cause(path: str, c: Changed) -> Cause:
    return Cause(path, _kind_of(path), c.old.flat().get(path), c.new.flat().get(path))


def _moved(path: str, c: Changed) -> bool:
    return c.old.flat().get(path) != c.new.flat().get(path)


def _code_causes(kind: str, c: Changed) -> list[str]:
    if not _moved(f"code.{kind}", c):
        return []
    tools = sorted(set(c.old.tools.get(kind, [])) | set(c.new.tools.get(kind, [])))
    facts = [f"toolchain.{t}" for t in tools if _moved(f"toolchain.{t}", c)]
    source = c.old.sources.get(kind) != c.new.sources.get(kind) or not c.new.sources
    return ([f"code.{kind}"] if source or not facts else []) + facts


def _case_causes(case: str, c: Changed) -> list[str]:
    moved = [
        p for p in ("public", "case", "reference", "version") if _moved(f"cases.{case}.{p}", c)
    ]
    for part in ("checks", "calibration", "grading"):  # the first that moved explains the rest
        if _moved(f"cases.{case}.{part}", c):
            moved.append(part)
            break
    return [f"cases.{case}.{p}" for p in moved]


def _shared_on_path(kind: str, name: str, cases: set[str]) -> bool:
    """A cell every entry shares: the aggregate, an image, or a case-level cell (evidence,
    workspace, oracle, the reference's and the starter's probe and capture) of ``cases``."""
    parts = name.split(".")
    if kind in ("aggregate", "image"):
        return True
    per_attempt = kind in ATTEMPT_KINDS and len(parts) == 4
    return kind in CASE_KINDS and not per_attempt and parts[0] in cases


def _entry_cells(entry: str, cases: set[str], c: Changed) -> tuple[dict[str, int], set[str]]:
    """The changed cells on ``entry``'s path, by kind, and the cases they touch."""
    counts: dict[str, int] = {}
    touched = set(cases)
    mine = []
    for kind, name in c.cells:
        parts = name.split(".")
        if kind in ATTEMPT_KINDS and len(parts) == 4 and parts[1] == entry:
            touched.add(parts[2])
            mine.append(kind)
    mine += [kind for kind, name in c.cells if _shared_on_path(kind, name, touched)]
    for kind in mine:
        counts[kind] = counts.get(kind, 0) + 1
    return counts, touched


def causes(entry: str, cases: set[str], c: Changed) -> tuple[list[Cause], dict[str, int]]:
    cells, touched = _entry_cells(entry, cases, c)
    paths: list[str] = []
    for kind in cells:
        paths += _code_causes(kind, c)
    for case in sorted(touched):
        paths += _case_causes(case, c)
    attempts_moved = "attempt" in cells
    singles = [
        ("calibration", "grade" in cells),
        (f"entries.{entry}", True),
        ("protocol", attempts_moved),
        ("withdrawals", entry in c.withdrawn),
        ("definition", "aggregate" in cells),
    ]
    paths += [p for p, relevant in singles if relevant and _moved(p, c)]
    if attempts_moved or "image" in cells:
        paths += [p for p in sorted(c.new.flat().keys() | c.old.flat().keys())
                  if p.startswith("images.") and _moved(p, c)]  # fmt: skip
    unique = list(dict.fromkeys(paths))
    return [_cause(p, c) for p in unique], cells


def passed(entry: str, old: Mapping[str, int | None], new: Mapping[str, int | None]) -> list[str]:
    """Entries ranked in both releases whose order with ``entry`` flipped."""
    mine = (old.get(entry), new.get(entry))
    if None in mine:
        return []
    flipped = []
    for other in sorted(old.keys() & new.keys() - {entry}):
        theirs = (old[other], new[other])
        if None in theirs:
            continue
        if (mine[0] < theirs[0]) != (mine[1] < theirs[1]):  # type: ignore[operator]
            flipped.append(other)
    return flipped
