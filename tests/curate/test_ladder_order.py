"""The ladder's order (pure) and `recon case ladder` exiting 1 naming the step and dimension."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recon.cli import main
from recon.curate import ladder_run
from recon.curate.ladder import CHEATS, LADDER
from recon.curate.ladder_order import breaks, table
from recon.model.grading import DIMENSIONS

REPO = Path(__file__).resolve().parents[2]


def _grade(total: float, **dims: float) -> dict[str, Any]:
    values = dict.fromkeys(DIMENSIONS, 1.0) | dims
    return {"total": total, "dimensions": values, "details": {"policy": {}}}


def _ordered() -> dict[str, dict[str, Any]]:
    cheat = _grade(0.3, policy=0.0, regional_visual=0.2)
    cheat["details"]["policy"] = {"violations": ["evidence_as_imagery"]}
    return {
        "reference": _grade(1.0),
        "faithful": _grade(0.9, regional_visual=0.9),
        "recoloured": _grade(0.8, regional_visual=0.6),
        "shifted": _grade(0.7, regional_visual=0.5, global_visual=0.8),
        "missing": _grade(0.6, regional_visual=0.3, functional=0.5),
        "blank": _grade(0.1, global_visual=0.0, regional_visual=0.0, functional=0.0),
        "evidence-background": cheat,
        "image-only": cheat,
    }


def test_an_ordered_ladder_has_no_break() -> None:
    grades = _ordered()
    assert breaks(list(LADDER), CHEATS, grades) == []
    assert "ladder of x" in table("x", grades)


def test_a_step_that_costs_its_dimension_nothing_is_named() -> None:
    grades = _ordered()
    grades["shifted"] = _grade(0.75, regional_visual=0.6, global_visual=1.0)
    found = [b.line("x") for b in breaks(list(LADDER), CHEATS, grades)]
    assert found == [
        "x: ladder step 'shifted', regional_visual/global_visual: costs none of them "
        "against recoloured"
    ]


def test_a_cheat_that_passes_policy_and_a_reference_below_one_are_named() -> None:
    grades = _ordered()
    grades["reference"] = _grade(0.99, responsive=0.99)
    grades["image-only"] = _grade(0.2, regional_visual=0.1)
    found = {(b.step, b.dimension) for b in breaks(list(LADDER), CHEATS, grades)}
    assert found == {("reference", "responsive"), ("image-only", "policy")}


def test_the_command_exits_1_naming_the_step_and_dimension(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    grades = _ordered()
    grades["missing"] = _grade(0.72, regional_visual=0.5, functional=1.0)
    found = breaks(list(LADDER), CHEATS, grades)

    def fake_run(project: object, ids: list[str], jobs: int) -> tuple[list[Any], Any]:
        result = ladder_run.Result(ids[0], table(ids[0], grades), found)
        return [result], ladder_run.Cells(ran=3, reused=40)

    monkeypatch.setattr(ladder_run, "run", fake_run)
    code = main(["--root", str(REPO), "case", "ladder", "todomvc"])
    out = capsys.readouterr().out
    assert code == 1
    assert (
        "BROKEN: todomvc: ladder step 'missing', total: 0.720 is not below shifted's 0.700" in out
    )
    assert "BROKEN: todomvc: ladder step 'missing', functional/regional_visual:" in out
    assert "0 of 1 ladder(s) ordered; cells: 3 ran, 40 reused from the store, 0 doit" in out


def test_no_case_named_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(REPO), "case", "ladder"]) == 2
    assert "name case ids or give --all" in capsys.readouterr().err
