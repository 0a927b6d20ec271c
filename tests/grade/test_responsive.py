"""Unit tests for recon.grade.responsive."""

from __future__ import annotations

from recon.grade.responsive import OVERFLOW_HALF_LIFE_PX, ViewportResult, overflow_px, score
from recon.model.grading import Thresholds
from tests.grade.synthetic import el

TH = Thresholds()


def landing(width: int) -> list[dict]:
    """A single-column page laid out to ``width``."""
    return [
        el("body", (0, 0, width, 900)),
        el("h1", (16, 16, width - 32, 40), "Acme Widgets"),
        el("nav", (16, 64, width - 32, 32), role="navigation"),
        el("p", (16, 112, width - 32, 200), "Widgets snap together."),
    ]


WEIGHTS = {"nav-visible": 1.0, "menu-button": 1.0}


def view(
    name: str,
    width: int,
    visual: float = 1.0,
    *,
    passed: dict | None = None,
    dom: list[dict] | None = None,
    reference: list[dict] | None = None,
) -> ViewportResult:
    return ViewportResult(
        name=name,
        width=width,
        visual=visual,
        dom=landing(width) if dom is None else dom,
        layout_passed={"nav-visible": True, "menu-button": True} if passed is None else passed,
        layout_weights=WEIGHTS,
        reference_dom=reference,
    )


FAITHFUL = [view("desktop", 1280), view("tablet", 768), view("mobile", 390)]


def test_faithful_everywhere_scores_exactly_one() -> None:
    result = score(FAITHFUL, TH)
    assert result.score == 1.0
    assert [r["viewport"] for r in result.rows] == ["desktop", "mobile", "tablet"]
    assert all(r["overflow_px"] == 0 and r["combined"] == 1.0 for r in result.rows)


def test_blank_everywhere_scores_near_zero() -> None:
    blank = [view(v.name, v.width, 0.02, passed={}, dom=[]) for v in FAITHFUL]
    assert score(blank, TH).score < 0.25  # overflow is still fine on a blank page


def test_one_broken_viewport_costs_real_points() -> None:
    broken = [FAITHFUL[0], FAITHFUL[1], view("mobile", 390, 0.1, passed={}, dom=landing(1280))]
    result = score(broken, TH)
    mobile = next(r for r in result.rows if r["viewport"] == "mobile")
    assert mobile["overflow_px"] == 1280 - 390 and mobile["overflow"] < 1e-6
    assert mobile["layout"] == 0.0
    assert result.terms["min"] == mobile["combined"]
    assert result.score == 0.5 * result.terms["mean"] + 0.5 * mobile["combined"]
    assert result.score < result.terms["mean"] - 0.25  # a plain mean would hide it


def test_overflow_has_a_tolerance_then_halves_per_half_life() -> None:
    def overflow_of(extra: int) -> float:
        dom = [el("div", (0, 0, 390 + extra, 10))]
        return score([view("mobile", 390, dom=dom)], TH).rows[0]["overflow"]

    assert overflow_of(TH.overflow_tolerance_px) == 1.0
    half = overflow_of(TH.overflow_tolerance_px + int(OVERFLOW_HALF_LIFE_PX))
    assert half == 0.5
    assert overflow_of(5) > overflow_of(40) > overflow_of(400)


def test_overflow_the_reference_also_has_is_allowed() -> None:
    drawer = el("aside", (390, 0, 300, 800))  # an off-canvas drawer in both
    ref = [*landing(390), drawer]
    result = score([view("mobile", 390, dom=[*landing(390), drawer], reference=ref)], TH)
    assert result.rows[0]["overflow_allowance_px"] == 300 and result.rows[0]["overflow"] == 1.0
    assert overflow_px([drawer], 390) == 300


def test_monotonic_in_visual_and_layout() -> None:
    def total(visual: float, passed: dict) -> float:
        return score([FAITHFUL[0], view("mobile", 390, visual, passed=passed)], TH).score

    assert (
        total(1.0, {"nav-visible": True, "menu-button": True})
        > total(0.7, {"nav-visible": True, "menu-button": True})
        > total(0.7, {"nav-visible": True})
    )


def test_viewport_without_layout_assertions_uses_visual_and_overflow() -> None:
    v = ViewportResult(name="desktop", width=1280, visual=0.8, dom=landing(1280))
    row = score([v], TH).rows[0]
    assert "layout" not in row
    assert row["combined"] == (0.5 * 0.8 + 0.2 * 1.0) / 0.7


def test_empty_dom_one_pixel_page_and_no_viewports() -> None:
    assert overflow_px([], 390) == 0
    tiny = [el("div", (0, 0, 390, 1))]
    assert score([view("mobile", 390, dom=tiny)], TH).score == 1.0
    assert score([], TH).score == 1.0


def test_deterministic() -> None:
    views = [view("a", 390, 0.37, dom=landing(420)), view("b", 1280, 0.91)]
    assert score(views, TH).score.hex() == score(list(views), TH).score.hex()


def test_layout_is_met_by_doing_what_the_reference_does() -> None:
    """The reference hides its nav at mobile: a candidate that hides it too loses nothing,
    one that shows it there deviates from the reference."""
    reference = {"nav-visible": False, "menu-button": True}

    def layout(passed: dict) -> float:
        v = view("mobile", 390, passed=passed)
        relative = ViewportResult(**(vars(v) | {"reference_passed": reference}))
        return float(score([relative], TH).rows[0]["layout"])

    assert layout({"nav-visible": False, "menu-button": True}) == 1.0
    assert layout({"nav-visible": True, "menu-button": True}) == 0.5
    assert layout({"menu-button": True}) == 1.0  # no row: not passed, as the reference
    assert layout({}) == 0.5
    plain = score([view("mobile", 390, passed={"menu-button": True})], TH)
    assert plain.rows[0]["layout"] == 0.5  # without reference outcomes: the pass rate
