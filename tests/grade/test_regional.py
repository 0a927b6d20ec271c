"""Unit tests for recon.grade.regional and its selector resolution (synthetic pages)."""

from __future__ import annotations

import numpy as np
import pytest

from recon.errors import ConfigError
from recon.grade.regional import BLANK_GUARD, Regional, Still, resolve_regions, score
from recon.model.grading import Region, Thresholds
from tests.grade.synthetic import NAVY, draw, el, landing, recoloured, shifted, without

REGIONS = [
    Region(id="hero", selector='section:has-text("Build faster")', weight=2.0),
    Region(id="header", selector="header"),
    Region(id="cards", box=(0, 410, 640, 220)),
]
TH = Thresholds()
REF_DOM = landing()
REF = {"desktop": Still(draw(REF_DOM), REF_DOM)}


def grade(dom: list[dict], height: int = 900, regions: list[Region] = REGIONS) -> Regional:
    return score(regions, {"desktop": Still(draw(dom, height), dom)}, REF, TH)


def row(result: Regional, ident: str) -> dict:
    return next(r for r in result.rows if r["id"] == ident)


def test_identical_page_scores_exactly_one_with_every_term() -> None:
    result = grade(REF_DOM)
    assert result.score == 1.0
    for r in result.rows:
        assert r["ssim"] == 1.0 and r["colour"] == 1.0 and r["combined"] == 1.0
        assert r["text"] == 1.0 and r["position"] == 1.0
    assert row(result, "hero")["box"] == [0, 100, 640, 280]
    assert result.terms["weight_sum"] == 4.0


def test_blank_candidate_scores_near_zero() -> None:
    blank = [el("html", (0, 0, 640, 900)), el("body", (0, 0, 640, 900))]
    result = grade(blank)
    assert result.score < 0.1
    assert all(r["blank_guard"] == BLANK_GUARD for r in result.rows)
    assert all(r["text"] == 0.0 and r["position"] == 0.0 for r in result.rows)


def test_ladder_recoloured_then_shifted_then_missing_each_cost_more() -> None:
    faithful = grade(REF_DOM).score
    recolour = grade(recoloured(REF_DOM, "section", "rgb(250, 200, 120)"))
    shift = grade(shifted(REF_DOM, 90, below=100))
    missing = grade(without(REF_DOM, 100, 380))
    assert faithful > recolour.score > shift.score > missing.score > 0
    hero = row(recolour, "hero")
    assert hero["colour"] < 1.0 and hero["text"] == 1.0 and hero["position"] == 1.0
    assert row(shift, "hero")["position"] < 1.0
    assert row(missing, "hero")["text"] == 0.0 and row(missing, "hero")["position"] == 0.0


def test_position_is_full_within_tolerance_and_decays_monotonically_beyond() -> None:
    values = [
        row(grade(shifted(REF_DOM, dy, below=100)), "hero")["position"]
        for dy in (0, TH.position_tolerance_px, 60, 120, 240)
    ]
    assert values[0] == values[1] == 1.0
    assert values[1] > values[2] > values[3] > values[4] > 0


def test_changed_text_lowers_the_text_term_only_below_the_threshold() -> None:
    near = [e | {"text": "Build faster with widgets!"} if e["tag"] == "h2" else e for e in REF_DOM]
    far = [e | {"text": "Lorem ipsum dolor"} if e["tag"] == "h2" else e for e in REF_DOM]
    assert row(grade(near), "hero")["text"] == 1.0  # ratio above text_similarity
    changed = row(grade(far), "hero")
    assert changed["text_ratio"] < TH.text_similarity and changed["text"] < 1.0
    assert changed["anchors_matched"] == changed["anchors"] - 1


def test_pages_of_different_heights() -> None:
    taller = grade(REF_DOM, height=1400)
    assert taller.score == 1.0  # regions read the same pixels; extra page below is ignored
    cut = [e for e in REF_DOM if e["box"][1] < 400]
    shorter = grade(cut, height=400)
    assert row(shorter, "cards")["combined"] < 0.6
    assert row(shorter, "hero")["combined"] == 1.0


def test_one_pixel_tall_page() -> None:
    ref_dom = [el("div", (0, 0, 64, 1), "x")]
    ref_img = np.zeros((1, 64, 3), dtype=np.uint8)
    ref_img[0, ::2] = 200
    regions = [Region(id="strip", box=(0, 0, 64, 1))]
    ref = {"desktop": Still(ref_img, ref_dom)}
    same = score(regions, {"desktop": Still(ref_img.copy(), ref_dom)}, ref, TH)
    assert same.score == 1.0
    blank = score(regions, {"desktop": Still(np.full_like(ref_img, 255), [])}, ref, TH)
    assert blank.score < 0.2


def test_region_without_text_scores_on_structure_alone() -> None:
    regions = [Region(id="bar", box=(0, 820, 640, 10))]
    result = grade(recoloured(REF_DOM, "footer", "rgb(200, 40, 40)"), regions=regions)
    r = row(result, "bar")
    assert r["has_text"] is False and "text" not in r
    assert r["combined"] == r["structure"] < 1.0


def test_scores_are_bit_for_bit_deterministic() -> None:
    dom = shifted(recoloured(REF_DOM, "header", "rgb(90, 20, 30)"), 13, below=400)
    first, second = grade(dom), grade([dict(e) for e in dom])
    assert first.score.hex() == second.score.hex()
    assert [r["combined"].hex() for r in first.rows] == [r["combined"].hex() for r in second.rows]


# --- resolve_regions -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "box"),
    [
        ("header", (0, 0, 640, 80)),
        ("[role=navigation]", (360, 28, 260, 24)),
        ('nav[aria-label="Main"]', (360, 28, 260, 24)),
        ("a[role='button']", (40, 290, 160, 44)),
        (':has-text("get started")', (0, 0, 640, 900)),  # the html element contains it first
        ('article:has-text("Safe")', (228, 420, 188, 200)),
        ("article >> nth=2", (432, 420, 188, 200)),
        ("h3:has-text('cheap')", (444, 436, 160, 28)),
    ],
)
def test_selectors_the_snapshot_can_answer(selector: str, box: tuple[int, ...]) -> None:
    resolution = resolve_regions([Region(id="r", selector=selector)], REF_DOM)
    assert resolution.problems == ()
    assert resolution.boxes["r"] == box


@pytest.mark.parametrize(
    ("region", "expected"),
    [
        (
            Region(id="gone", selector='section:has-text("Testimonials")'),
            "matches nothing in the reference (desktop)",
        ),
        (Region(id="third", selector="section >> nth=2"), "nth=2 does not exist"),
        (Region(id="cls", selector=".hero"), "syntax a DOM snapshot cannot answer"),
        (Region(id="combo", selector="main > section"), "give a box"),
        (Region(id="far", box=(0, 5000, 100, 100)), "lies outside the reference page"),
        (Region(id="phone", selector="header", viewport="mobile"), "no reference capture"),
    ],
)
def test_unresolvable_regions_are_reported_with_id_and_fix(region: Region, expected: str) -> None:
    resolution = resolve_regions([REGIONS[1], region], {"desktop": REF_DOM})
    assert len(resolution.problems) == 1
    assert resolution.problems[0].startswith(f"regions[1] ({region.id}): ")
    assert expected in resolution.problems[0]
    assert list(resolution.boxes) == ["header"]


def test_grading_an_unresolvable_selector_is_a_config_error() -> None:
    regions = [Region(id="gone", selector="aside")]
    with pytest.raises(
        ConfigError, match=r"regions\[0\] \(gone\): selector: 'aside' matches nothing"
    ):
        score(regions, REF, REF, TH)


def test_box_regions_and_colour_from_dom() -> None:
    # the hero box given directly resolves to itself and scores like the selector
    by_box = [Region(id="hero", box=(0, 100, 640, 280))]
    dom = recoloured(REF_DOM, "section", NAVY)
    assert grade(dom, regions=by_box).score == row(grade(dom), "hero")["combined"]


# What the candidate's DOM renders, not whatever pixels are there (issue 11) -----------


def _pasted(dom: list[dict], **change: object) -> list[dict]:
    """The reference's pixels, but every element hidden and ``html`` painting an image."""
    out = [e | {"painted": False} for e in dom]
    return [e | change if e["tag"] == "html" else e for e in out]


def test_a_screenshot_pasted_as_a_background_earns_nothing() -> None:
    cheat = _pasted(REF_DOM, painted=True, image=True)
    result = score(REGIONS, {"desktop": Still(draw(REF_DOM), cheat)}, REF, TH)
    assert result.score == 0.0
    for r in result.rows:
        assert r["pixels"] == 1.0  # the pixels are the reference's...
        assert r["foreign_imagery"] == 1.0 and r["structure"] == 0.0  # ...painted by an image
        if r["has_text"]:
            assert r["text"] == 0.0 and r["position"] == 0.0  # and its text is hidden


def test_an_img_over_visible_text_loses_the_pixels_only_where_it_lies() -> None:
    hero = (0, 100, 640, 280)
    cheat = [*REF_DOM, el("img", hero)]
    result = score(REGIONS, {"desktop": Still(draw(REF_DOM), cheat)}, REF, TH)
    assert row(result, "hero")["foreign_imagery"] == 1.0
    assert row(result, "hero")["combined"] == 0.5  # text and position kept, pixels lost
    assert row(result, "header")["foreign_imagery"] == 0.0
    assert row(result, "header")["combined"] == 1.0


def test_an_image_the_reference_has_there_costs_nothing() -> None:
    photo = el("img", (0, 410, 640, 220))
    ref_dom = [*REF_DOM, photo]
    ref = {"desktop": Still(draw(ref_dom), ref_dom)}
    moved = [*REF_DOM, el("div", (0, 410, 640, 220)) | {"image": True}]  # a CSS background
    result = score(REGIONS, {"desktop": Still(draw(ref_dom), moved)}, ref, TH)
    assert row(result, "cards")["foreign_imagery"] == 0.0
    assert result.score == 1.0


def test_hidden_or_transparent_text_reads_as_no_text() -> None:
    hidden = [e | {"painted": False} if e["tag"] == "h2" else e for e in REF_DOM]
    clear = [e | {"color": "rgba(0, 0, 0, 0)"} if e["tag"] == "h2" else e for e in REF_DOM]
    for dom in (hidden, clear):
        hero = row(score(REGIONS, {"desktop": Still(draw(REF_DOM), dom)}, REF, TH), "hero")
        assert hero["text"] < 1.0 and hero["anchors_matched"] == hero["anchors"] - 1


def test_a_page_wide_screenshot_is_foreign_even_over_the_reference_s_own_icons() -> None:
    icons = [el("span", (24 + 40 * i, 436, 32, 32)) | {"image": True} for i in range(3)]
    ref_dom = [*REF_DOM, *icons]
    ref = {"desktop": Still(draw(ref_dom), ref_dom)}
    cheat = _pasted(ref_dom, painted=True, image=True)
    result = score(REGIONS, {"desktop": Still(draw(ref_dom), cheat)}, ref, TH)
    assert all(r["foreign_imagery"] == 1.0 for r in result.rows)
    assert result.score == 0.0
    kept = score(REGIONS, {"desktop": Still(draw(ref_dom), ref_dom)}, ref, TH)
    assert kept.score == 1.0 and all(r["foreign_imagery"] == 0.0 for r in kept.rows)
