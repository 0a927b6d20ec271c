"""Unit tests for recon.grade.global_visual and its SSIM kernel (skimage is a test-only oracle).

Pages come from ``tests.grade.synthetic``: a DOM snapshot and the screenshot drawn from it,
so a defect changes both as a render would. Issue 17's variants on real renders of every
case are in ``test_visual_variants.py``.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest
from skimage.filters import gaussian
from skimage.metrics import structural_similarity

from recon.errors import HarnessError
from recon.grade import _ssim
from recon.grade.global_visual import (
    COVERAGE_FLOOR,
    SPAN_FLOOR,
    VERSION,
    WEIGHTS,
    GlobalVisual,
    score,
)
from tests.grade.synthetic import WIDTH, draw, el, landing, recoloured, shifted, without

Dom = list[dict[str, Any]]
REF_DOM = landing()
REF = draw(REF_DOM)


def grade(dom: Dom, image: np.ndarray | None = None, *, ref_dom: Dom = REF_DOM) -> GlobalVisual:
    ref = draw(ref_dom, max(900, _bottom(ref_dom)))
    cand = draw(dom, max(900, _bottom(dom))) if image is None else image
    return score(cand, ref, candidate_dom=dom, reference_dom=ref_dom)


def _bottom(dom: Dom) -> int:
    return max(e["box"][1] + e["box"][3] for e in dom)


def tall(copies: int = 3) -> Dom:
    """``copies`` landing pages stacked, each with its own words (a 900 px screen each)."""
    dom: Dom = [el("html", (0, 0, WIDTH, 900 * copies)), el("body", (0, 0, WIDTH, 900 * copies))]
    for k in range(copies):
        for e in landing()[2:]:
            x, y, w, h = e["box"]
            text = f"{e['text']} part {k}" if e["text"] else ""
            dom.append(e | {"box": [x, y + 900 * k, w, h], "text": text})
    return dom


def swapped(dom: Dom, a: tuple[int, int], b: tuple[int, int]) -> Dom:
    """The DOM with the rows a and b (equal heights) exchanged."""
    out = []
    for e in dom:
        x, y, w, h = e["box"]
        if a[0] <= y and y + h <= a[1]:
            y += b[0] - a[0]
        elif b[0] <= y and y + h <= b[1]:
            y -= b[0] - a[0]
        out.append(e | {"box": [x, y, w, h]})
    return out


def test_identical_pages_score_exactly_one() -> None:
    result = grade(REF_DOM)
    assert isinstance(result, GlobalVisual)
    assert result.score == 1.0 and result.version == VERSION
    for term in (
        "content",
        "coverage",
        "text",
        "position",
        "ssim",
        "colour",
        "layout",
        "palette",
        "extent",
        "appearance",
        "guard",
    ):
        assert result.terms[term] == 1.0, term
    assert result.terms["added"] == 0.0
    assert result.terms["score"] == result.score


def test_an_empty_page_is_blank_by_content() -> None:
    empty = REF_DOM[:2]  # html and body only
    result = grade(empty, np.full_like(REF, 255))
    assert result.terms["coverage"] == 0.0 and result.terms["coverage_guard"] == 0.0
    assert result.terms["ink_ratio"] == 0.0 and result.score == 0.0


def test_text_in_the_dom_but_not_on_screen_is_not_content() -> None:
    """The DOM alone cannot make a page non-blank: its blocks must show in its pixels."""
    result = grade(REF_DOM, np.full_like(REF, 255))
    assert result.terms["candidate_blocks"] == 0.0
    assert result.terms["candidate_hidden"] == result.terms["reference_blocks"]
    assert result.terms["coverage_guard"] == 0.0 and result.score == 0.0


def test_right_content_on_a_flat_background_is_not_blank() -> None:
    """Issue 17's sign-in page: a reference with a coloured hero and header, rebuilt flat."""
    flat = recoloured(
        recoloured(REF_DOM, "section", "rgb(255, 255, 255)"), "header", "rgb(60, 60, 60)"
    )
    result = grade(flat)
    assert result.terms["guard"] == 1.0 and result.terms["coverage"] == 1.0
    assert result.terms["colour"] < 1.0
    assert 0.6 <= result.score < 1.0


def test_grey_copy_loses_the_colour_term() -> None:
    luma = REF @ np.array([0.299, 0.587, 0.114])
    grey = np.repeat(np.round(luma).astype(np.uint8)[..., None], 3, axis=2)
    result = grade(REF_DOM, grey)
    assert result.terms["colour_applicable"] == 1.0 and result.terms["colour"] < 0.5
    assert result.terms["content"] == 1.0
    assert result.score <= 1.0 - 0.10


def test_first_screen_of_a_long_page_loses_what_it_omits() -> None:
    dom = tall(3)
    image = draw(dom, 2700)
    image[900:] = 255
    result = grade(dom, image, ref_dom=dom)
    assert result.terms["coverage"] == pytest.approx(1 / 3, abs=0.05)
    assert result.terms["span"] == pytest.approx(1 / 3, abs=0.05)
    assert result.score <= 0.5  # the variant table's bound, faithful - 0.33, and then some


def test_fewer_items_down_the_whole_page_keep_their_span() -> None:
    """Each of three stacked pages without its paragraphs (the shorter page people chose over
    fuller ones in issue 28) reaches every band; the first page alone reaches a third."""
    dom = tall(3)
    fewer = [e for e in dom if not (e["tag"] == "p" and e["box"][1] % 900 < 800)]  # 2 of 3 p
    kept = grade(fewer, ref_dom=dom)
    assert kept.terms["coverage"] < 0.8 and kept.terms["span"] == 1.0
    assert kept.terms["span_guard"] == 1.0
    first = grade([e for e in dom if e["box"][1] < 900], ref_dom=dom)
    assert first.terms["span"] == pytest.approx(0.3, abs=0.05) and first.terms["span_guard"] < 0.7
    assert first.score < kept.score


def test_right_content_at_another_height_is_not_crushed() -> None:
    """40 px lower, or the cards 120 px lower: the row map finds the content where it is."""
    down = shifted(REF_DOM, 40, 0)
    moved = grade(down)
    assert moved.terms["ssim"] > 0.97 and moved.terms["content"] == 1.0
    assert moved.score >= 0.8
    cards = grade(shifted(REF_DOM, 120, 400))
    assert cards.terms["coverage"] == 1.0 and cards.score >= 0.8
    unaligned = score(draw(down, 940), REF)  # the image path: no content to align by
    assert unaligned.terms["ssim"] < moved.terms["ssim"]


def test_reordered_sections_cost_position_not_content() -> None:
    # The hero (rows 100-380) and the cards (420-700, so 100-380 + 320) trade places.
    reordered = swapped(REF_DOM, (100, 380), (420, 700))
    result = grade(reordered)
    assert result.terms["content"] == 1.0 and result.terms["position"] < 0.9
    assert grade(REF_DOM[:2], np.full_like(REF, 255)).score < result.score < 1.0


def test_missing_and_added_content_cost() -> None:
    """Cards missing: their layout, palette, extent and position; more of them missing, the
    guard (the content term is reported, and people weigh layout over it: issue 28)."""
    missing = grade(without(REF_DOM, 410, 640))
    assert 0.3 < missing.terms["coverage"] < 1.0 and missing.terms["added"] == 0.0
    assert missing.terms["layout"] < 1.0 and missing.terms["palette"] < 1.0
    assert missing.score < 0.95
    most = grade(without(REF_DOM, 100, 900))
    assert most.terms["coverage_guard"] < 1.0 and most.score < missing.score
    extra = [*REF_DOM, el("p", (40, 700, 400, 40), "Subscribe to our newsletter today")]
    added = grade(extra)
    assert added.terms["coverage"] == 1.0 and added.terms["added"] > 0.0
    assert added.terms["content"] < 1.0 and added.score < 1.0


def test_the_score_is_appearance_times_guard() -> None:
    result = grade(without(REF_DOM, 100, 640))
    t = result.terms
    used = [k for k in WEIGHTS["content"] if t[f"w_{k}"] > 0]
    assert set(used) == {"ssim", "colour", "position", "layout", "palette", "extent", "typeface"}
    mix = sum(t[f"w_{k}"] * t[k] for k in used) / sum(t[f"w_{k}"] for k in used)
    assert t["appearance"] == pytest.approx(mix)
    assert t["guard"] == pytest.approx(t["coverage_guard"] * t["span_guard"] * t["ink_guard"])
    assert t["coverage_guard"] == pytest.approx(min(1.0, t["coverage"] / COVERAGE_FLOOR))
    assert t["span_guard"] == pytest.approx(min(1.0, t["span"] / SPAN_FLOOR))
    assert result.score == pytest.approx(t["appearance"] * t["guard"])


def test_width_is_cropped_or_padded_never_resized() -> None:
    wider = np.concatenate([REF, np.zeros((900, 50, 3), np.uint8)], axis=1)
    assert grade(REF_DOM, wider).score == 1.0  # extra columns cropped away on the right
    narrow = grade(REF_DOM, REF[:, :600])  # white-padded on the right
    assert narrow.terms["candidate_width"] == 600
    assert 0.5 < narrow.score < 1.0


def test_alpha_channel_is_dropped() -> None:
    rgba = np.concatenate([REF, np.zeros((900, WIDTH, 1), np.uint8)], axis=2)
    assert grade(REF_DOM, rgba).score == 1.0


def test_deterministic_bit_for_bit() -> None:
    dom = shifted(recoloured(REF_DOM, "article", "rgb(250, 220, 200)"), 7, 300)
    first, second = grade(dom), grade([dict(e) for e in dom])
    assert first.score.hex() == second.score.hex()
    assert {k: v.hex() for k, v in first.terms.items()} == {
        k: v.hex() for k, v in second.terms.items()
    }


# --- the image path (workflow checkpoint screenshots: no DOM) ---------------------------


def test_image_path_scores_identical_pages_one_and_blank_pages_near_zero() -> None:
    assert score(REF, REF.copy()).score == 1.0
    blank = score(np.full_like(REF, 255), REF)
    assert blank.terms["content_applicable"] == 0.0 and blank.terms["w_position"] == 0.0
    assert blank.score <= 0.05


def test_image_path_judges_a_near_white_page_by_what_it_holds() -> None:
    """One line of text on white: the empty margins do not make an empty page score."""
    ref = np.full((900, 1440, 3), 255, np.uint8)
    ref[20:38, 10:400] = 34
    blank = score(np.full_like(ref, 255), ref)
    assert blank.terms["ssim_unweighted"] > 0.95 and blank.score < 0.2
    assert score(ref.copy(), ref).score == 1.0


@pytest.mark.parametrize("shape", [(1, 320), (1, 1), (3, 5), (1, 6)])
def test_tiny_pages_work(shape: tuple[int, int]) -> None:
    ref = REF[: shape[0], : shape[1]].copy()
    assert score(ref, ref.copy()).score == 1.0
    other = score(255 - ref, ref)
    assert 0.0 <= other.score < 1.0


def test_uniform_pages() -> None:
    white = np.full((200, 100, 3), 255, np.uint8)
    assert score(white, white.copy()).score == 1.0
    assert score(np.zeros_like(white), white).score < 0.1


def test_tall_page_memory_is_bounded_by_bands() -> None:
    dom = tall(22)  # 640 x 19,800
    ref = draw(dom, 19_800)
    cand_dom = shifted(dom, 30, 9000)
    cand = draw(cand_dom, 19_830)
    tracemalloc.start()
    try:
        result = score(cand, ref, candidate_dom=cand_dom, reference_dom=dom)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    assert result.terms["ssim_pool"] == 4.0 and result.terms["content"] == 1.0
    assert 0.9 < result.score < 1.0


def test_bad_input_is_a_harness_error() -> None:
    with pytest.raises(HarnessError, match="candidate"):
        score(REF[..., 0], REF)
    with pytest.raises(HarnessError, match="reference"):
        score(REF, REF.astype(np.float32))
    with pytest.raises(HarnessError, match="candidate"):
        score(REF[:0], REF)


# --- the SSIM kernel ----------------------------------------------------------------------


def smooth(shape: tuple[int, int], seed: int) -> np.ndarray:
    """Smooth random luma in 0..255 (float64), blurred noise plus a gradient."""
    rng = np.random.default_rng(seed)
    blurred = gaussian(rng.random(shape), sigma=3.0)
    blurred = (blurred - blurred.min()) / (np.ptp(blurred) + 1e-12)
    ramp = np.linspace(0.0, 1.0, shape[1])[None, :]
    return np.asarray(255.0 * (0.7 * blurred + 0.3 * ramp))


def skimage_ssim(x: np.ndarray, y: np.ndarray) -> float:
    return float(
        structural_similarity(
            x,
            y,
            win_size=7,
            data_range=255,
            gaussian_weights=False,
            use_sample_covariance=True,
        )
    )


@pytest.mark.parametrize("shape", [(64, 80), (37, 51), (7, 7), (200, 9)])
def test_ssim_matches_skimage_uniform_window(shape: tuple[int, int]) -> None:
    x = np.round(smooth(shape, seed=1)).astype(np.int64)
    y = np.round(np.clip(smooth(shape, seed=2) * 0.4 + x * 0.6, 0, 255)).astype(np.int64)
    ours = _ssim.mean_ssim(x, y)
    assert ours == pytest.approx(skimage_ssim(x.astype(float), y.astype(float)), abs=1e-4)


def test_ssim_on_scaled_luma_matches_skimage() -> None:
    x = np.round(smooth((90, 70), seed=3) * 1000).astype(np.int64)  # luma in 1/1000 units
    y = np.round(smooth((90, 70), seed=4) * 1000).astype(np.int64)
    ours = _ssim.mean_ssim(x, y, scale=1000)
    assert ours == pytest.approx(skimage_ssim(x / 1000, y / 1000), abs=1e-4)


def test_ssim_bands_agree_with_one_band(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.round(smooth((300, 40), seed=5)).astype(np.int64)
    y = np.round(smooth((300, 40), seed=6)).astype(np.int64)
    whole = _ssim.mean_ssim(x, y)
    monkeypatch.setattr(_ssim, "BAND_PIXELS", 40 * 13)  # 13-row bands, 6-row overlap
    assert _ssim.mean_ssim(x, y) == pytest.approx(whole, abs=1e-12)


def test_ssim_bands_hand_over_every_window_once() -> None:
    x = np.round(smooth((100, 30), seed=7)).astype(np.int64)
    y = np.round(smooth((100, 30), seed=8)).astype(np.int64)
    seen: list[tuple[int, int]] = []
    total = 0.0

    def take(t0: int, xb: np.ndarray, yb: np.ndarray, band: np.ndarray) -> None:
        nonlocal total
        assert t0 % 4 == 0 and xb.shape[0] == band.shape[0] + 6 == yb.shape[0]
        seen.append((t0, band.shape[0]))
        total += float(band.sum())

    tops, cols = _ssim.ssim_bands(lambda a, b: (x[a:b], y[a:b]), 100, 30, 1, take, multiple=4)
    assert (tops, cols) == (94, 24)
    assert sum(n for _, n in seen) == 94
    assert total / (tops * cols) == pytest.approx(_ssim.mean_ssim(x, y), abs=1e-12)


def test_ssim_refuses_widths_that_could_overflow() -> None:
    wide = np.zeros((1, _ssim.MAX_WIDTH + 1), np.int64)
    with pytest.raises(ValueError, match="wide"):
        _ssim.mean_ssim(wide, wide)


def page_luma(height: int, width: int, seed: int) -> np.ndarray:
    """Luma * 1000 of a white page with blocks and text-like lines."""
    rng = np.random.default_rng(seed)
    img = np.full((height, width), 255_000, dtype=np.int64)
    for _ in range(max(1, height // 40)):
        y, x = int(rng.integers(0, height)), int(rng.integers(0, width))
        img[y : y + int(rng.integers(8, 80)), x : x + int(rng.integers(20, width // 2 + 21))] = int(
            rng.integers(0, 255_001)
        )
    for y in range(4, height - 6, 14):
        words = rng.integers(0, 2, width // 6).astype(bool).repeat(6)[:width]
        img[y : y + 6, : words.size][:, words] = 30_000
    return img


@pytest.mark.parametrize("band_rows", [0, 13])
def test_ssim_equals_skimage_on_a_page_pair(
    monkeypatch: pytest.MonkeyPatch, band_rows: int
) -> None:
    """Chunks, bands and the equal-row shortcut give skimage's number, to rounding."""
    ref = page_luma(300, 200, seed=3)
    cand = ref.copy()
    cand[150:] = ref[147:-3]  # the lower half 3 px lower: the upper rows stay equal
    cand[60, 100] += 1  # and one changed pixel among them
    if band_rows:
        monkeypatch.setattr(_ssim, "BAND_PIXELS", 200 * band_rows)
        monkeypatch.setattr(_ssim, "CHUNK_PIXELS", 200 * 5)
    ours = _ssim.mean_ssim(cand, ref, scale=1000)
    assert 0.5 < ours < 1.0
    assert ours == pytest.approx(skimage_ssim(cand / 1000, ref / 1000), abs=1e-9)


def faced(dom: Dom, family: str) -> Dom:
    """The DOM with every text element's computed font-family set to ``family``."""
    return [e | {"font": {**e["font"], "family": family}} if e["text"] else e for e in dom]


def test_unstyled_text_costs_typeface_where_the_reference_styled_it() -> None:
    styled = faced(REF_DOM, '"Inter", sans-serif')
    same = grade(styled, ref_dom=styled)
    dump = grade(faced(REF_DOM, '"Times New Roman"'), ref_dom=styled)  # the same pixels
    assert same.score == 1.0 and same.terms["typeface"] == 1.0
    assert dump.terms["unstyled_candidate"] == 1.0 and dump.terms["unstyled_reference"] == 0.0
    assert (
        dump.terms["typeface"] == 0.0 and dump.terms["w_typeface"] == WEIGHTS["content"]["typeface"]
    )
    assert dump.score == pytest.approx(1.0 - WEIGHTS["content"]["typeface"], abs=1e-9)


def test_a_reference_in_the_default_face_makes_the_default_face_right() -> None:
    bare = faced(REF_DOM, "serif")  # asks for serif: the browser's default face
    assert grade(faced(REF_DOM, "Times New Roman, serif"), ref_dom=bare).terms["typeface"] == 1.0
    half = [e | {"font": {**e["font"], "family": "Arial"}} if e["text"] and i % 2 else e
            for i, e in enumerate(bare)]  # fmt: skip
    got = grade(half, ref_dom=bare).terms
    assert got["unstyled_reference"] == 1.0 and 0.0 < got["unstyled_candidate"] < 1.0
    assert got["typeface"] == pytest.approx(got["unstyled_candidate"])  # 1 - |c - 1|


def test_typeface_does_not_apply_without_text_or_on_the_image_path() -> None:
    pictures = [e for e in REF_DOM if not e["text"]] + [el("img", (40, 300, 400, 300))]
    got = grade(pictures, ref_dom=pictures)
    assert got.terms["content_applicable"] == 1.0 and got.terms["typeface_applicable"] == 0.0
    assert got.terms["w_typeface"] == 0.0 and got.score == 1.0
    no_dom = score(REF, REF)
    assert "typeface" not in no_dom.terms and no_dom.terms["w_typeface"] == 0.0
