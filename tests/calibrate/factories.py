"""Small shots and judgements for the fast tests of recon.calibrate."""

from __future__ import annotations

from recon.calibrate.scores import Shot
from recon.model import Judgement
from recon.model.grading import DIMENSIONS


def digest(n: int) -> str:
    return f"{n:064x}"


def shot(
    n: int,
    case: str = "c",
    point: str = "root.desktop.default",
    entry: str | None = None,
    value: float = 0.5,
) -> Shot:
    dims = {d: value for d in DIMENSIONS}
    weights = {d: 1 / len(DIMENSIONS) for d in DIMENSIONS}
    return Shot(case, point, entry or f"e{n}", f"p.e{n}.{case}.0", digest(n), dims, {}, weights)


def row(
    left: int,
    right: int,
    choice: str = "left",
    rater: str = "r00000001",
    seed: int = 0,
    point: str = "root.desktop.default",
    case: str = "c",
) -> Judgement:
    return Judgement(
        release="demo",
        case=case,
        point=point,
        left=digest(left),
        right=digest(right),
        choice=choice,
        rater=rater,  # type: ignore[arg-type]
        time="2026-12-01T10:00:00Z",
        seed=seed,
    )
