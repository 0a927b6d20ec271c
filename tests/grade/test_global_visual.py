"""Unit tests for recon.grade.global_visual and its SSIM kernel (skimage is a test-only oracle)."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from skimage.filters import gaussian
from skimage.metrics import structural_similarity

from recon.errors import HarnessError
from recon.grade import _ssim
from recon.grade.global_visual import BLANK_GUARD, VERSION, GlobalVisual, score


def page(height: int, width: int = 320, seed: int = 0) -> np.ndarray:
    """A white page with coloured blocks and dark 'text' lines, deterministic per seed."""
    rng = np.random.default_rng(seed)
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    for _ in range(max(1, height // 40)):
        y, x = int(rng.integers(0, height)), int(rng.integers(0, width))
        h, w = int(rng.integers(8, 80)), int(rng.integers(20, width // 2 + 21))
        img[y : y + h, x : x + w] = rng.integers(0, 256, 3, dtype=np.uint8)
    for y in range(4, height - 6, 14):
        words = rng.integers(0, 2, width // 6).astype(bool).repeat(6)[:width]
        img[y : y + 6, : words.size][:, words] = 30
    return img


def smooth(shape: tuple[int, int], seed: int) -> np.ndarray:
    """Smooth random luma in 0..255 (float64), blurred noise plus a gradient."""
    rng = np.random.default_rng(seed)
    blurred = gaussian(rng.random(shape), sigma=3.0)
    blurred = (blurred - blurred.min()) / (np.ptp(blurred) + 1e-12)
    ramp = np.linspace(0.0, 1.0, shape[1])[None, :]
    return np.asarray(255.0 * (0.7 * blurred + 0.3 * ramp))


REF = page(600)


def test_identical_pages_score_exactly_one() -> None:
    result = score(REF, REF.copy())
    assert isinstance(result, GlobalVisual)
    assert result.score == 1.0
    assert result.version == VERSION
    assert result.terms["ssim"] == 1.0 and result.terms["colour"] == 1.0
    assert result.terms["score"] == result.score


def test_blank_candidate_scores_below_a_tenth() -> None:
    result = score(np.full_like(REF, 255), REF)
    assert result.score < 0.1
    assert result.terms["blank_guard"] == BLANK_GUARD
    assert result.terms["candidate_uniform"] == 1.0
    assert result.terms["reference_uniform"] == 0.0


def test_recoloured_region_scores_between_blank_and_identical() -> None:
    recoloured = REF.copy()
    recoloured[100:300, 40:280] = REF[100:300, 40:280][..., ::-1]  # swap R and B
    blank = score(np.full_like(REF, 255), REF).score
    result = score(recoloured, REF)
    assert blank < result.score < 1.0
    assert result.terms["colour"] < 1.0
    assert result.terms["blank_guard"] == 1.0


def test_shifted_content_scores_lower_than_identical() -> None:
    shifted = np.full_like(REF, 255)
    shifted[9:] = REF[:-9]
    result = score(shifted, REF)
    assert 0.1 < result.score < 1.0
    assert result.terms["ssim"] < 1.0


def test_height_difference_is_penalised_by_the_declared_term() -> None:
    short = score(REF[:384], REF)
    assert short.terms["height_ratio"] == 384 / 600
    assert short.terms["height_term"] == pytest.approx(0.8)
    assert short.score <= 0.8
    tall = np.concatenate([REF, np.full((150, REF.shape[1], 3), 255, np.uint8)])
    padded = score(tall, REF)
    assert padded.terms["height_ratio"] == 600 / 750
    assert padded.score < 1.0


def test_width_is_cropped_or_padded_never_resized() -> None:
    wider = np.concatenate([REF, np.zeros((600, 50, 3), np.uint8)], axis=1)
    assert score(wider, REF).score == 1.0  # extra columns cropped away on the right
    narrow = score(REF[:, :300], REF)  # white-padded on the right
    assert narrow.terms["candidate_width"] == 300
    assert 0.5 < narrow.score < 1.0


def test_alpha_channel_is_dropped() -> None:
    rgba = np.concatenate([REF, np.zeros((600, 320, 1), np.uint8)], axis=2)
    assert score(rgba, REF).score == 1.0


@pytest.mark.parametrize("shape", [(1, 320), (1, 1), (3, 5), (1, 6)])
def test_tiny_pages_work(shape: tuple[int, int]) -> None:
    ref = REF[: shape[0], : shape[1]].copy()
    assert score(ref, ref.copy()).score == 1.0
    other = score(255 - ref, ref)
    assert 0.0 <= other.score < 1.0


def test_one_pixel_tall_candidate_against_a_full_page() -> None:
    result = score(REF[:1], REF)
    assert result.terms["height_ratio"] == 1 / 600
    assert 0.0 <= result.score < 0.05


def test_uniform_pages() -> None:
    white = np.full((200, 100, 3), 255, np.uint8)
    assert score(white, white.copy()).score == 1.0
    black = score(np.zeros_like(white), white)
    assert black.terms["blank_guard"] == 1.0  # both uniform: no guard, but low score
    assert black.score < 0.1


def test_deterministic_bit_for_bit() -> None:
    cand = page(600, seed=7)
    first, second = score(cand, REF), score(cand.copy(), REF.copy())
    assert first.score.hex() == second.score.hex()
    assert {k: v.hex() for k, v in first.terms.items()} == {
        k: v.hex() for k, v in second.terms.items()
    }


def test_tall_page_memory_is_bounded_by_bands() -> None:
    ref = np.tile(page(2000, 1440, seed=1), (10, 1, 1))  # 1440 x 20000
    cand = np.tile(page(2000, 1400, seed=2), (10, 1, 1))[:19000]
    tracemalloc.start()
    try:
        result = score(cand, ref)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 400 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    assert result.terms["ssim_pool"] == 2.0
    assert 0.0 < result.score < 1.0


def test_bad_input_is_a_harness_error() -> None:
    with pytest.raises(HarnessError, match="candidate"):
        score(REF[..., 0], REF)
    with pytest.raises(HarnessError, match="reference"):
        score(REF, REF.astype(np.float32))
    with pytest.raises(HarnessError, match="candidate"):
        score(REF[:0], REF)


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


def test_ssim_refuses_widths_that_could_overflow() -> None:
    wide = np.zeros((1, _ssim.MAX_WIDTH + 1), np.int64)
    with pytest.raises(ValueError, match="wide"):
        _ssim.mean_ssim(wide, wide)


def test_blank_page_is_guarded_against_a_near_white_reference() -> None:
    """One line of text on white (ink 0.3%) still differs from an empty page."""
    ref = np.full((900, 1440, 3), 255, np.uint8)
    ref[20:38, 10:400] = 34  # a line of text
    blank = score(np.full_like(ref, 255), ref)
    assert blank.terms["blank_guard"] == BLANK_GUARD and blank.score < 0.06
    moved = ref.copy()
    moved[20:38], moved[120:138] = 255, ref[20:38]  # the same line, 100 px lower
    shifted = score(moved, ref)
    assert shifted.terms["blank_guard"] == 1.0 and shifted.score > blank.score


@pytest.mark.parametrize("band_rows", [0, 13])
def test_ssim_equals_skimage_on_a_page_pair(
    monkeypatch: pytest.MonkeyPatch, band_rows: int
) -> None:
    """Chunks, bands and the equal-row shortcut give skimage's number, to rounding."""
    ref = page(300, 200, seed=3).astype(np.int64) @ np.array([299, 587, 114])  # luma * 1000
    cand = ref.copy()
    cand[150:] = ref[147:-3]  # the lower half 3 px lower: the upper rows stay equal
    cand[60, 100] += 1  # and one changed pixel among them
    if band_rows:
        monkeypatch.setattr(_ssim, "BAND_PIXELS", 200 * band_rows)
        monkeypatch.setattr(_ssim, "CHUNK_PIXELS", 200 * 5)
    ours = _ssim.mean_ssim(cand, ref, scale=1000)
    assert 0.5 < ours < 1.0
    assert ours == pytest.approx(skimage_ssim(cand / 1000, ref / 1000), abs=1e-9)
