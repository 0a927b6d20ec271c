"""``recon diff`` explains every moved score and rank: input → cells → scores → ranks."""

from __future__ import annotations

from typing import Any

import pytest

from recon.model import (
    CaseScore,
    EntryResult,
    Manifest,
    ManifestCell,
    ManifestInputs,
    ReleaseResult,
    Reliability,
    ReliabilityReport,
)
from recon.release.diff import diff
from recon.release.diff_report import render_table, to_json
from tests.release.factories import d

ENTRIES = ("alpha", "beta")
CASES = ("home", "shop")
KINDS = ("attempt", "capture", "probe", "grade")
CHROMIUM = "Chromium 156.0.8078.114"


def _case_inputs(case: str) -> dict[str, str]:
    parts = ("public", "grading", "checks", "calibration")
    return {part: d(f"{part}-{case}") for part in parts}


def inputs(**over: Any) -> ManifestInputs:
    kinds = (*KINDS, "oracle", "aggregate")
    fields: dict[str, Any] = {
        "cases": {c: _case_inputs(c) for c in CASES},
        "entries": {e: d(f"entry-{e}") for e in ENTRIES},
        "protocol": d("protocol"),
        "code": {k: d(f"code-{k}") for k in kinds},
        "toolchain": {"chromium": CHROMIUM, "numpy": "2.4.6"},
        "definition": d("definition"),
        "withdrawals": d("withdrawals"),
        "images": {"docker": d("image")},
        "sources": {k: d(f"src-{k}") for k in kinds},
        "tools": {
            "capture": ["chromium", "python"],
            "probe": ["chromium", "python"],
            "oracle": ["chromium", "python"],
            "grade": ["numpy", "python"],
            "aggregate": ["numpy", "python"],
        },
    }
    return ManifestInputs(**(fields | over))


def manifest(ins: ManifestInputs, moved: dict[str, set[str]] | None = None) -> Manifest:
    """One cell of each per-attempt kind per entry and case (``std.<entry>.<case>.0``), an
    oracle per case and the aggregate; ``moved`` re-keys cells: kind -> entries (or cases)."""
    moved = moved or {}
    cells = []
    for kind in KINDS:
        for e in ENTRIES:
            for c in CASES:
                tag = "new" if e in moved.get(kind, set()) or c in moved.get(kind, set()) else ""
                cells.append(ManifestCell(kind=kind, name=f"std.{e}.{c}.0",
                                          key=d(f"{kind}{e}{c}{tag}"), outputs={}))  # fmt: skip
    for c in CASES:
        tag = "new" if c in moved.get("oracle", set()) else ""
        cells.append(ManifestCell(kind="oracle", name=f"{c}.root.desktop.default",
                                  key=d(f"o{c}{tag}"), outputs={}))  # fmt: skip
    agg = "new" if moved else ""
    cells.append(ManifestCell(kind="aggregate", name="r", key=d(f"agg{agg}"), outputs={}))
    return Manifest(release="r", inputs=ins, cells=cells, release_json=d(agg), site=d(agg))


def _entry(name: str, rank: int | None, score: float, cases: dict[str, float]) -> EntryResult:
    return EntryResult(
        entry=name,
        model="m",
        agent="a",
        rank=rank,
        ranked=rank is not None,
        score=score,
        covered=len(cases),
        cases=[
            CaseScore(case=c, attempts={"valid": 1}, valid=1, mean=m, per_attempt=[m])
            for c, m in cases.items()
        ],
    )


def result(
    scores: dict[str, tuple[int | None, float]], cases: dict[str, dict[str, float]]
) -> ReleaseResult:
    return ReleaseResult(
        release="r",
        title="t",
        protocol="std",
        formal=True,
        formal_note="",
        aggregation="case-mean-v1",
        active_cases=list(CASES),
        entries=[_entry(e, rank, score, cases[e]) for e, (rank, score) in scores.items()],
        attempts=[],
        reliability=ReliabilityReport(
            overall=Reliability(attempts=0, by_outcome={}, harness_failure_rate=None)
        ),
    )


BEFORE = result(
    {"alpha": (1, 0.70), "beta": (2, 0.60)},
    {"alpha": {"home": 0.8, "shop": 0.6}, "beta": {"home": 0.5, "shop": 0.7}},
)
AFTER = result(
    {"alpha": (2, 0.65), "beta": (1, 0.72)},
    {"alpha": {"home": 0.7, "shop": 0.6}, "beta": {"home": 0.74, "shop": 0.7}},
)


def test_a_grader_edit_is_the_cause_of_every_moved_score_and_rank() -> None:
    new = inputs(
        code={**inputs().code, "grade": d("grade-v2")},
        sources={**inputs().sources, "grade": d("src-grade-v2")},
    )
    result_diff = diff(manifest(inputs()), BEFORE, manifest(new, {"grade": set(ENTRIES)}), AFTER)
    chains = {c.entry: c for c in result_diff.chains}
    assert set(chains) == {"alpha", "beta"}
    alpha = chains["alpha"]
    assert [c.path for c in alpha.causes] == ["code.grade"] and alpha.causes[0].kind == "code"
    assert alpha.cells == {"grade": 2, "aggregate": 1}
    assert [(m.case, m.old, m.new) for m in alpha.cases] == [("home", 0.8, 0.7)]
    assert alpha.rank == (1, 2) and alpha.passed == ["beta"]
    table = render_table(result_diff)
    line = next(x for x in table.splitlines() if "cells → beta " in x)
    assert line == (
        "  code.grade changed → 2 grade, 1 aggregate cells → beta +0.2400 on home → rank 2 → 1 "
        "(order flipped with alpha)"
    )
    data = to_json(result_diff)["chains"]
    assert data[0]["entry"] == "alpha" and data[0]["causes"][0]["path"] == "code.grade"
    assert data[0]["rank"] == [1, 2] and data[0]["cells"] == {"aggregate": 1, "grade": 2}


def test_a_chromium_change_is_its_own_cause_not_a_code_edit() -> None:
    code = {**inputs().code, **{k: d(f"{k}-on-157") for k in ("capture", "probe", "oracle")}}
    new = inputs(code=code, toolchain={"chromium": "Chromium 157.0.1", "numpy": "2.4.6"})
    moved = {"capture": {"alpha"}, "probe": {"alpha"}, "grade": {"alpha"}, "oracle": {"home"}}
    result_diff = diff(manifest(inputs()), BEFORE, manifest(new, moved), AFTER)
    alpha = next(c for c in result_diff.chains if c.entry == "alpha")
    assert [(c.path, c.kind) for c in alpha.causes] == [("toolchain.chromium", "chromium")]
    assert (alpha.causes[0].old, alpha.causes[0].new) == (CHROMIUM, "Chromium 157.0.1")
    assert alpha.cells == {"capture": 2, "probe": 2, "grade": 2, "oracle": 1, "aggregate": 1}


def test_a_calibration_change_and_an_image_change_are_their_own_causes() -> None:
    cases = {**inputs().cases}
    cases["home"] = {**cases["home"], "grading": d("gr2"), "calibration": d("cal2")}
    new = inputs(cases=cases, images={"docker": d("image-2")})
    moved = {"attempt": {"beta"}, "grade": {"home"}}
    result_diff = diff(manifest(inputs()), BEFORE, manifest(new, moved), AFTER)
    beta = next(c for c in result_diff.chains if c.entry == "beta")
    assert [(c.path, c.kind) for c in beta.causes] == [
        ("cases.home.calibration", "calibration"),
        ("images.docker", "image"),
    ]
    alpha = next(c for c in result_diff.chains if c.entry == "alpha")
    assert [c.path for c in alpha.causes] == ["cases.home.calibration"]  # its attempts kept


def test_float_moves_within_the_tolerance_count_as_unchanged() -> None:
    nudged = result(
        {"alpha": (1, 0.70 + 1e-12), "beta": (2, 0.60)},
        {"alpha": {"home": 0.8 + 2e-12, "shop": 0.6}, "beta": {"home": 0.5, "shop": 0.7}},
    )
    quiet = diff(manifest(inputs()), BEFORE, manifest(inputs(), {"grade": {"alpha"}}), nudged)
    assert quiet.scores == [] and quiet.cases == [] and quiet.chains == []
    assert "(no score or rank moved)" in render_table(quiet)
    strict = diff(manifest(inputs()), BEFORE, manifest(inputs()), nudged, tolerance=0.0)
    assert [m.entry for m in strict.scores] == ["alpha"]
    assert [(m.entry, m.case) for m in strict.cases] == [("alpha", "home")]
    with pytest.raises(Exception, match="tolerance"):
        diff(manifest(inputs()), BEFORE, manifest(inputs()), nudged, tolerance=-1.0)
