"""FROZEN baseline for bench/grade_speed.py: recon/grade/global_visual.py as it was at
a6c2afa (``global-visual/1``), before issue 17. Not used by recon; do not edit.

Global visual score: does the rendered page match the full reference composition?

A pure function of two full-page screenshots (DESIGN.md §6, "global visual")::

    score = clip01(height_term * (W_SSIM * ssim + W_COLOUR * colour) * blank_guard)

Alignment never resizes: the candidate is cropped or white-padded on the right
to the reference width, then the shorter page is white-padded at the bottom.

- ``height_term = (min(hc, hr) / max(hc, hr)) ** HEIGHT_EXPONENT``.
- ``ssim``: mean SSIM of Rec. 601 luma, uniform 7x7 window, K1 = 0.01,
  K2 = 0.03, L = 255 (see ``_ssim``). Pages above ``POOL_ABOVE_PIXELS`` are
  2x2 mean-pooled first (an odd last row or column is dropped).
- ``colour = 1 - colour_diff``: mean absolute difference of the mean RGB of
  ``CELL`` x ``CELL`` cells, over 255, weighted by cell area (edge cells are
  partial).
- ``blank_guard``: ``BLANK_GUARD`` when the candidate is blank and the reference is
  not, else 1. A page is *blank* when its luma std is below ``BLANK_LUMA_STD``; the
  candidate is also blank when its ink (the share of pixels not of the dominant
  colour) is below ``BLANK_INK_RATIO`` times the reference's ink — so a near-white
  reference with one line of text still guards against an empty page.

Pages are read in row bands, so extra memory is a few bands at any height.
Every intermediate number is returned in ``GlobalVisual.terms``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from recon.errors import HarnessError
from recon.grade._ssim import BAND_PIXELS, MAX_WIDTH, mean_ssim_rows, window_shape

VERSION = "global-visual/1"

HEIGHT_EXPONENT = 0.5
"""Square root: a page 64% of the reference height keeps 80% of its score."""
W_SSIM = 0.7
W_COLOUR = 0.3
CELL = 32
POOL_ABOVE_PIXELS = 4_000_000
BLANK_LUMA_STD = 2.0
BLANK_INK_RATIO = 0.1
BLANK_GUARD = 0.05
LUMA_MILLI = (299, 587, 114)
"""Rec. 601 luma weights times 1000: integer luma is exact, in units of 1/1000."""
WHITE = 255


@dataclass(frozen=True)
class GlobalVisual:
    """The score in [0, 1] and every term of the arithmetic that produced it."""

    score: float
    terms: dict[str, float]
    version: str = VERSION


def score(candidate: np.ndarray, reference: np.ndarray) -> GlobalVisual:
    """Score a candidate full-page screenshot against the reference (HxWx3 or HxWx4 uint8)."""
    cand = _rgb(candidate, "candidate")
    ref = _rgb(reference, "reference")
    (hc, wc), (hr, wr) = cand.shape[:2], ref.shape[:2]
    height, width = max(hc, hr), wr
    height_ratio = min(hc, hr) / height
    terms: dict[str, float] = {
        "candidate_height": hc,
        "candidate_width": wc,
        "reference_height": hr,
        "reference_width": wr,
        "height_ratio": height_ratio,
        "height_exponent": HEIGHT_EXPONENT,
        "height_term": height_ratio**HEIGHT_EXPONENT,
    }
    terms |= _structure(cand, ref, height, width)
    terms |= _colour(cand, ref, height, width)
    terms |= _blank_guard(cand, ref)
    terms["w_ssim"], terms["w_colour"] = W_SSIM, W_COLOUR
    terms["appearance"] = W_SSIM * terms["ssim"] + W_COLOUR * terms["colour"]
    terms["raw"] = terms["height_term"] * terms["appearance"] * terms["blank_guard"]
    terms["score"] = min(1.0, max(0.0, terms["raw"]))
    return GlobalVisual(score=terms["score"], terms={k: float(v) for k, v in terms.items()})


def _structure(cand: np.ndarray, ref: np.ndarray, height: int, width: int) -> dict[str, float]:
    """Mean SSIM of the aligned pages' luma, 2x2 pooled above POOL_ABOVE_PIXELS."""
    pool = 2 if height * width > POOL_ABOVE_PIXELS and min(height, width) >= 2 else 1
    rows, cols = height // pool, width // pool

    def luma_rows(r0: int, r1: int) -> tuple[np.ndarray, np.ndarray]:
        a = _luma(_aligned_rows(cand, r0 * pool, r1 * pool, width), pool)
        b = _luma(_aligned_rows(ref, r0 * pool, r1 * pool, width), pool)
        return a, b

    win_rows, win_cols = window_shape(rows, cols)
    return {
        "ssim": mean_ssim_rows(luma_rows, rows, cols, scale=1000 * pool * pool),
        "ssim_pool": pool,
        "ssim_window_rows": win_rows,
        "ssim_window_cols": win_cols,
    }


def _colour(cand: np.ndarray, ref: np.ndarray, height: int, width: int) -> dict[str, float]:
    """Area-weighted mean |Δ mean RGB| / 255 over CELL-px cells, and 1 minus it."""
    step = _band_rows(width, multiple=CELL)
    diff = 0
    for r0 in range(0, height, step):
        r1 = min(height, r0 + step)
        a = _cell_sums(_aligned_rows(cand, r0, r1, width))
        b = _cell_sums(_aligned_rows(ref, r0, r1, width))
        diff += int(np.abs(a - b).sum())
    colour_diff = diff / (WHITE * 3 * height * width)
    return {"colour_cell": CELL, "colour_diff": colour_diff, "colour": 1.0 - colour_diff}


def _blank_guard(cand: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    """BLANK_GUARD when the candidate is blank and the reference is not (module docstring)."""
    terms: dict[str, float] = {}
    for name, img in (("candidate", cand), ("reference", ref)):
        terms[f"{name}_luma_std"] = _luma_std(img)
        terms[f"{name}_ink"] = 1.0 - _dominant_share(img)
    ref_blank = terms["reference_luma_std"] < BLANK_LUMA_STD
    cand_blank = terms["candidate_luma_std"] < BLANK_LUMA_STD or (
        terms["candidate_ink"] < BLANK_INK_RATIO * terms["reference_ink"]
    )
    terms["candidate_uniform"] = float(cand_blank)
    terms["reference_uniform"] = float(ref_blank)
    terms["blank_guard"] = BLANK_GUARD if cand_blank and not ref_blank else 1.0
    return terms


def _luma_std(img: np.ndarray) -> float:
    """Population standard deviation of the page's own luma (no alignment padding)."""
    total = squares = 0
    for band in _bands(img):
        y = _luma(band, 1).astype(np.int64)
        total += int(y.sum())
        squares += int((y * y).sum())
    n = img.shape[0] * img.shape[1]
    return math.sqrt(n * squares - total * total) / n / 1000


def _dominant_share(img: np.ndarray) -> float:
    """Share of pixels equal to the per-channel-mode colour.

    Any colour covering more than half the page has each channel at that
    channel's mode, so this is the dominant colour's share whenever it exceeds
    one half, which is all the 99.5% test needs, without a 2**24-bin histogram.
    """
    hist = np.zeros((3, 256), dtype=np.int64)
    for band in _bands(img):
        for c in range(3):
            hist[c] += np.bincount(band[..., c].ravel(), minlength=256)
    r, g, b = (int(v) for v in hist.argmax(axis=1))
    equal = 0
    for band in _bands(img):
        same = band[..., 0] == r
        same &= band[..., 1] == g
        same &= band[..., 2] == b
        equal += int(np.count_nonzero(same))
    return equal / (img.shape[0] * img.shape[1])


def _aligned_rows(img: np.ndarray, r0: int, r1: int, width: int) -> np.ndarray:
    """Rows r0:r1 of ``img`` cropped or white-padded on the right/bottom to ``width``."""
    height, own_width = img.shape[:2]
    if own_width == width and r1 <= height:
        return img[r0:r1]
    out = np.full((r1 - r0, width, 3), WHITE, dtype=np.uint8)
    have = max(0, min(r1, height) - r0)
    cols = min(own_width, width)
    out[:have, :cols] = img[r0 : r0 + have, :cols]
    return out


def _luma(rgb: np.ndarray, pool: int) -> np.ndarray:
    """Rec. 601 luma * 1000 as int32, summed over 2x2 blocks when ``pool`` is 2."""
    r, g, b = LUMA_MILLI
    y = np.multiply(rgb[..., 0], r, dtype=np.int32)
    y += np.multiply(rgb[..., 1], g, dtype=np.int32)
    y += np.multiply(rgb[..., 2], b, dtype=np.int32)
    if pool == 1:
        return y
    rows, cols = y.shape[0] // pool * pool, y.shape[1] // pool * pool
    y = y[0:rows:2] + y[1:rows:2]
    return y[:, 0:cols:2] + y[:, 1:cols:2]


def _cell_sums(rgb: np.ndarray) -> np.ndarray:
    """Per-cell RGB sums (int64) over CELL x CELL cells; edge cells are partial.

    A column of CELL uint8 values sums below 2**16, so the row pass adds in uint16.
    """
    column = np.uint16 if CELL * WHITE < 1 << 16 else np.int64
    by_rows = np.add.reduceat(rgb, np.arange(0, rgb.shape[0], CELL), axis=0, dtype=column)
    return np.add.reduceat(by_rows, np.arange(0, rgb.shape[1], CELL), axis=1, dtype=np.int64)


def _bands(img: np.ndarray) -> list[np.ndarray]:
    """Row-band views of ``img`` of about BAND_PIXELS pixels each."""
    step = _band_rows(img.shape[1])
    return [img[r0 : r0 + step] for r0 in range(0, img.shape[0], step)]


def _band_rows(width: int, multiple: int = 1) -> int:
    rows = max(1, BAND_PIXELS // max(width, 1))
    return max(multiple, rows // multiple * multiple)


def _rgb(img: np.ndarray, name: str) -> np.ndarray:
    """The RGB view of an HxWx3 or HxWx4 uint8 screenshot, or a HarnessError naming the fault."""
    if not isinstance(img, np.ndarray) or img.dtype != np.uint8:
        raise HarnessError(f"global_visual: {name}: expected a uint8 numpy array")
    if img.ndim != 3 or img.shape[2] not in (3, 4) or img.shape[0] < 1 or img.shape[1] < 1:
        raise HarnessError(
            f"global_visual: {name}: expected shape HxWx3 or HxWx4 with H, W >= 1, "
            f"got {img.shape}; decode the screenshot as RGB(A) before scoring"
        )
    if img.shape[1] > MAX_WIDTH:
        raise HarnessError(
            f"global_visual: {name}: {img.shape[1]} px wide, over the {MAX_WIDTH} px limit "
            "that keeps the SSIM sums exact; capture at a page width below it"
        )
    return img[..., :3]
