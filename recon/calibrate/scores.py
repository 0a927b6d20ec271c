"""The per-capture scores of a built release: what a preference is measured against.

A capture is one matrix point's full-page still of one attempt (its PNG's digest names it).
Its scores are the attempt's seven dimensions, except ``global_visual``, which is the
point's own row (a rater sees one point, not the attempt's mean), and its metric terms:
each dimension's public and sealed terms of the attempt (``functional.passed``…) and the
point's global-visual terms (``global_visual@point.ssim``…). The current composite is the
weighted sum with the weights the grade used (its arithmetic), over these point scores.

Read from the release's manifest (``releases/<id>/manifest.json``) and the store; the page,
the pairs and the fit get plain :class:`Shot` records.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recon.errors import ConfigError
from recon.model import Manifest, load_json
from recon.model.captures import PointFiles
from recon.model.grading import DIMENSIONS
from recon.store import Store, tree_files

CALIBRATED = "~"
"""A calibrated grade cell is named ``<attempt>~<calibration>``."""


@dataclass(frozen=True)
class Shot:
    """One capture of one matrix point of one attempt, with its scores. The point is named
    by its id (:attr:`recon.model.matrix.Point.id`), as grade tables and preference rows
    name it: a shot holds nothing else of the point."""

    case: str
    point: str
    entry: str
    attempt: str
    digest: str  # the PNG's digest: the capture's name in preference rows
    dimensions: Mapping[str, float]
    terms: Mapping[str, float] = field(default_factory=dict)
    weights: Mapping[str, float] = field(default_factory=dict)  # what its grade used

    def composite(self, weights: Mapping[str, float] | None = None) -> float:
        use = self.weights if weights is None else weights
        return sum(float(use.get(d, 0.0)) * self.dimensions[d] for d in DIMENSIONS)


def manifest_path(root: Path, release: str) -> Path:
    return root / "releases" / release / "manifest.json"


def load_manifest(root: Path, release: str) -> Manifest:
    path = manifest_path(root, release)
    if not path.is_file():
        raise ConfigError(
            f"{path}: release {release!r} is not built; run `doit release:{release}` first"
        )
    return load_json(Manifest, path)


def shots(store: Store, manifest: Manifest) -> list[Shot]:
    """Every graded capture of the release (attempts without a valid build have none)."""
    captures = {c.name: c for c in manifest.cells if c.kind == "capture"}
    found: list[Shot] = []
    for cell in manifest.cells:
        if cell.kind != "grade" or "grade" not in cell.outputs:
            continue
        attempt = cell.name.split(CALIBRATED)[0]
        table = store.read_json(cell.outputs["grade"].digest)
        capture = captures.get(attempt)
        if "dimensions" not in table or capture is None or "captures" not in capture.outputs:
            continue  # a skipped grade: the attempt is not valid
        found += list(_attempt_shots(store, attempt, table, capture.outputs["captures"].digest))
    return sorted(found, key=lambda s: (s.case, s.point, s.attempt))


def point_scores(table: Mapping[str, Any]) -> dict[str, tuple[dict[str, float], dict[str, float]]]:
    """A grade table's scores per matrix point: (dimensions, terms), ``global_visual``
    being the point's own row; points whose capture failed are left out."""
    rows = {r["point"]: r for r in table["details"].get("global_visual", [])}
    attempt_terms = {
        f"{dim}.{name}": float(value)
        for dim, terms in sorted(table.get("terms", {}).items())
        for name, value in sorted(terms.items())
        if dim != "global_visual" and isinstance(value, int | float)
    }
    found = {}
    for point, row in sorted(rows.items()):
        if "failure" in row:
            continue
        dims = {d: float(table["dimensions"][d]) for d in DIMENSIONS}
        dims["global_visual"] = float(row["score"])
        terms = {f"global_visual@point.{k}": float(v) for k, v in sorted(row["terms"].items())}
        found[point] = (dims, attempt_terms | terms)
    return found


def used_weights(table: Mapping[str, Any]) -> dict[str, float]:
    """The weights the grade combined its dimensions with (its arithmetic)."""
    return {r["term"]: float(r["weight"]) for r in table.get("arithmetic", [])}


def _attempt_shots(store: Store, attempt: str, table: dict[str, Any], tree: str) -> Iterator[Shot]:
    _protocol, entry, case, _index = attempt.split(".")
    files = tree_files(store, tree)
    weights = used_weights(table)
    for point, (dims, terms) in point_scores(table).items():
        still = files.get(PointFiles.path(point, PointFiles.FULL))
        if still is not None:
            yield Shot(case, point, entry, attempt, still.digest, dims, terms, weights)


def by_digest(found: list[Shot]) -> dict[tuple[str, str, str], Shot]:
    """(case, point, capture digest) -> one shot. Attempts that built the same bytes give
    the same capture; their scores are the same, so the first stands for all."""
    table: dict[tuple[str, str, str], Shot] = {}
    for shot in found:
        table.setdefault((shot.case, shot.point, shot.digest), shot)
    return table
