"""Every dimension of the grading model has a metric card (DESIGN §6, issue 26 item 9).

The dimensions are the grading model's (``recon.model.grading.DIMENSIONS``); the module
that computes one is the grader module whose ``VERSION`` names it (``regional_visual`` ->
``regional-visual/2``, :mod:`recon.grade.regional`), and its card is
``recon/grade/cards/<module>.md``. Nothing here lists the seven by hand.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from recon.model.grading import DIMENSIONS

GRADE = Path(__file__).resolve().parents[2] / "recon" / "grade"
CARDS = GRADE / "cards"
LEADS = ("Question.", "Code.", "Inputs.")
"""The bold lead-ins of a card's opening paragraphs: what it measures, where, from what."""
SECTIONS = ("Formula", "Evidence", "Known failure cases")
"""The ``##`` sections every card has, besides one on what the metric is blind to."""
README = GRADE.parents[1] / "README.md"


def versions() -> dict[str, str]:
    """Grader module name -> its metric VERSION, for every public module that has one."""
    found = {}
    for path in sorted(GRADE.glob("*.py")):
        if path.stem.startswith("_"):
            continue
        version = getattr(importlib.import_module(f"recon.grade.{path.stem}"), "VERSION", None)
        if isinstance(version, str):
            found[path.stem] = version
    return found


def module_of(dimension: str) -> tuple[str, str]:
    """The grader module computing ``dimension`` and its VERSION."""
    stem = dimension.replace("_", "-") + "/"
    found = [(m, v) for m, v in versions().items() if v.startswith(stem)]
    assert len(found) == 1, f"{dimension}: one grader module's VERSION names it, got {found}"
    return found[0]


def headings(text: str, level: int) -> list[str]:
    return re.findall(rf"^{'#' * level} (.+?)\s*$", text, flags=re.M)


def test_the_grading_model_names_seven_dimensions_each_computed_by_one_module() -> None:
    modules = {module_of(d)[0] for d in DIMENSIONS}
    assert len(DIMENSIONS) == 7 and len(modules) == 7


@pytest.mark.parametrize("dimension", DIMENSIONS)
def test_each_dimension_has_a_card_with_every_part(dimension: str) -> None:
    module, version = module_of(dimension)
    card = CARDS / f"{module}.md"
    assert card.is_file(), f"{dimension}: no metric card at {card}"
    text = card.read_text(encoding="utf-8")
    title = text.splitlines()[0]
    assert title.startswith("# Metric card: "), f"{card.name}: the first line is its title"
    assert f"`{version}`" in title, f"{card.name}: its title names the version it describes"
    for lead in LEADS:
        assert re.search(rf"^\*\*{re.escape(lead)}\*\* \S", text, flags=re.M), (card.name, lead)
    assert f"`recon/grade/{module}.py`" in text, f"{card.name}: its Code. names its module"
    assert set(SECTIONS) <= set(headings(text, 2)), card.name
    blind = [h for h in headings(text, 2) + headings(text, 3) if "blind to" in h.lower()]
    assert blind, f"{card.name}: a section says what the metric is blind to"


def test_every_card_is_a_dimensions_and_the_readme_links_them_all() -> None:
    cards = {f"{module_of(d)[0]}.md" for d in DIMENSIONS}
    assert {p.name for p in CARDS.glob("*.md")} == cards
    readme = README.read_text(encoding="utf-8")
    for name in sorted(cards):
        assert f"](recon/grade/cards/{name})" in readme, f"README: no link to {name}"
