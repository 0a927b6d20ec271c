"""Unit tests for recon.grade.preservation: protected checks kept after the change."""

from __future__ import annotations

import numpy as np

from recon.grade.preservation import PreservationScore, region_passes, score
from recon.grade.regional import Regional, Still
from recon.grade.regional import score as regional
from recon.model.grading import Assertion, Locator, Preservation, Region, Thresholds
from tests.grade.synthetic import draw, landing, without

REGIONS = [Region(id="hero", box=(0, 100, 640, 280), weight=2.0)]
PROTECTED = Preservation(
    assertions=[
        Assertion(id="login", locator=Locator(role="button", name="Log in"), expect="visible"),
        Assertion(id="search", locator=Locator(label="Search"), expect="visible", weight=3.0),
    ],
    regions=["hero"],
)
ALL = {"login": True, "search": True, "hero": True}


def test_everything_kept_scores_exactly_one() -> None:
    result = score(PROTECTED, REGIONS, ALL, ALL)
    assert isinstance(result, PreservationScore)
    assert result.score == 1.0 and result.terms["broken"] == 0


def test_everything_broken_scores_zero() -> None:
    assert score(PROTECTED, REGIONS, ALL, {}).score == 0.0


def test_only_checks_that_passed_before_are_in_the_denominator() -> None:
    before = {"login": True, "search": False, "hero": True}
    after = {"login": False, "search": True, "hero": True}
    result = score(PROTECTED, REGIONS, before, after)
    assert result.score == 2.0 / 3.0  # hero (2) kept of login (1) + hero (2)
    assert result.terms["newly_passing"] == 1 and result.terms["broken"] == 1


def test_breaking_more_costs_more() -> None:
    one = score(PROTECTED, REGIONS, ALL, ALL | {"login": False}).score
    two = score(PROTECTED, REGIONS, ALL, ALL | {"login": False, "search": False}).score
    assert 1.0 > one > two > 0


def test_empty_case_is_vacuous_and_scores_one() -> None:
    nothing = score(Preservation(), [], {}, {})
    assert nothing.score == 1.0 and nothing.terms["vacuous"] == 1.0
    never_passed = score(PROTECTED, REGIONS, {}, ALL)
    assert never_passed.score == 1.0 and never_passed.terms["vacuous"] == 1.0


def test_regions_pass_on_the_regional_threshold() -> None:
    th = Thresholds()
    dom = landing()
    ref = {"desktop": Still(draw(dom), dom)}
    kept: Regional = regional(REGIONS, ref, ref, th)
    gone_dom = without(dom, 100, 380)
    gone = regional(REGIONS, {"desktop": Still(draw(gone_dom), gone_dom)}, ref, th)
    assert region_passes(kept, th.region_pass) == {"hero": True}
    assert region_passes(gone, th.region_pass) == {"hero": False}
    before = {"login": True, "search": True} | region_passes(kept, th.region_pass)
    after = {"login": True, "search": True} | region_passes(gone, th.region_pass)
    result = score(PROTECTED, REGIONS, before, after)
    assert result.score == 4.0 / 6.0
    assert np.isclose(result.terms["weight_before"], 6.0)
    assert result.score.hex() == score(PROTECTED, REGIONS, dict(before), dict(after)).score.hex()
