"""The page at a glance (``recon.grade._gestalt``): layout, shape, palette, extent and ink."""

from __future__ import annotations

import numpy as np
import pytest

from recon.grade._gestalt import (
    CELL,
    LEVELS,
    OFFSETS,
    VIEW_ROWS,
    VIEW_WIDTH,
    gestalt,
    inked,
    palette,
    shape,
    view,
)


def page(width: int = 800, height: int = 1600) -> np.ndarray:
    return np.full((height, width, 3), 255, np.uint8)


def text(img: np.ndarray, x0: int, x1: int, y0: int, y1: int) -> np.ndarray:
    """Stripes of 'text' (black lines every 8 px) in a box."""
    img[y0:y1:8, x0:x1] = 0
    return img


def brute_palette(a: np.ndarray, b: np.ndarray) -> float:
    """The definition: quantise each shifted grid's pixels and intersect the histograms."""
    shared = []
    for i in range(OFFSETS):
        shift = i * (256 // LEVELS) // OFFSETS

        def hist(img: np.ndarray, shift: int = shift) -> np.ndarray:
            q = ((img.reshape(-1, 3).astype(np.int64) + shift) * LEVELS) // 256
            h = np.bincount((q[:, 0] * 9 + q[:, 1]) * 9 + q[:, 2], minlength=9**3)
            return h / h.sum()

        shared.append(np.minimum(hist(a), hist(b)).sum())
    return float(np.mean(shared))


def test_palette_is_the_shifted_grid_intersection_and_exactly_one_on_itself() -> None:
    rng = np.random.default_rng(3)
    for _ in range(12):
        a = rng.integers(0, 256, (int(rng.integers(1, 300)), 40, 3), dtype=np.uint8)
        noise = rng.integers(-40, 40, a.shape)
        b = np.clip(a.astype(int) + noise, 0, 255).astype(np.uint8)[: int(rng.integers(1, 300))]
        assert palette(a, b) == pytest.approx(brute_palette(a, b), abs=1e-12)
        assert palette(a, a.copy()) == 1.0
    white, black = page(40, 40), np.zeros((40, 40, 3), np.uint8)
    assert palette(white, black) == 0.0


def test_the_view_is_the_top_six_widths_at_400_px() -> None:
    assert view(page(800, 10_000)).shape == (VIEW_ROWS * VIEW_WIDTH, VIEW_WIDTH, 3)
    assert view(page(1440, 900)).shape == (250, VIEW_WIDTH, 3)


def test_inked_cells_are_those_whose_luma_spans_more_than_the_range() -> None:
    img = page(16, 8)
    img[0, 0] = 230  # a span of 25 grey levels: ink
    img[0, 8] = 232  # 23: flat
    got = inked(img)
    assert got.shape == (8 // CELL, 16 // CELL)
    assert got[0, 0] and not got[0, 2] and got.sum() == 1


def test_two_columns_against_one_stacked_column_lose_layout_not_palette() -> None:
    two = text(text(page(800, 2400), 40, 380, 40, 1200), 420, 760, 40, 1200)
    one = text(page(800, 2400), 40, 380, 40, 2360)  # the same lines, stacked on the left
    terms = gestalt(one, two)
    assert terms["layout"] < 0.6
    assert terms["palette"] > 0.9 and terms["ink_ratio"] == pytest.approx(1.0, abs=0.1)
    assert gestalt(two, two)["layout"] == 1.0


def test_extent_is_how_far_the_ink_reaches() -> None:
    full = text(page(), 40, 760, 40, 1560)
    half = text(page(), 40, 760, 40, 800)
    terms = gestalt(half, full)
    assert terms["extent"] == pytest.approx(800 / 1560, abs=0.02)
    assert terms["ink_ratio"] == pytest.approx(0.5, abs=0.03)


def header_and_columns(height: int) -> np.ndarray:
    """A header band, two columns of text and a footer line, in ``height`` px."""
    img = page(800, height)
    img[: height // 8, :] = (30, 30, 120)
    img[height // 16 : height // 16 + 2, 40:400] = 255  # the header's title
    text(img, 40, 380, height // 4, height * 7 // 8)
    text(img, 420, 760, height // 4, height * 7 // 8)
    return text(img, 40, 760, height - 40, height - 8)


def test_shape_keeps_a_shorter_page_with_the_same_arrangement() -> None:
    """The same arrangement in half the height keeps its shape and loses extent; the same
    ink stacked in one column loses shape."""
    full, short = header_and_columns(2400), header_and_columns(1200)
    kept = gestalt(short, full)
    assert kept["shape"] > 0.9 and kept["extent"] < 0.55
    stacked = text(page(800, 2400), 40, 380, 40, 2360)
    assert gestalt(stacked, full)["shape"] < 0.7
    assert gestalt(full, full)["shape"] == 1.0 and kept["shape_applicable"] == 1.0


def test_shape_is_the_half_l1_of_the_grid_shares() -> None:
    a, b = np.zeros((8, 16), bool), np.zeros((8, 16), bool)
    a[:4, :8] = True  # a's ink in 2 x 4 of the 4 x 8 grid's cells: 1/8 in each
    b[:, :] = True  # b's ink spread evenly: 1/32 in each cell
    assert shape(a, b) == pytest.approx(1 - 0.5 * (8 * (1 / 8 - 1 / 32) + 24 / 32))
    assert shape(a, np.zeros_like(a)) == 0.0 and shape(b[:0], b[:0]) == 1.0


def test_flat_pages_have_no_layout_or_extent_to_compare() -> None:
    terms = gestalt(np.zeros((200, 100, 3), np.uint8), page(100, 200))
    assert terms["layout_applicable"] == 0.0 and terms["extent_applicable"] == 0.0
    assert terms["shape_applicable"] == 0.0
    assert terms["palette"] == 0.0 and terms["ink_ratio"] == 1.0


def test_a_wider_candidate_is_cropped_to_the_reference() -> None:
    ref = text(page(), 40, 760, 40, 1560)
    wider = np.concatenate([ref, np.zeros((1600, 200, 3), np.uint8)], axis=1)
    assert gestalt(wider, ref) == gestalt(ref, ref)


def test_a_view_narrower_than_its_strips_has_a_strip_per_cell_column() -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)  # 16 cell columns, not 40
    b = rng.integers(0, 256, (48, 64, 3), dtype=np.uint8)
    assert gestalt(a, a.copy())["layout"] == 1.0
    other = gestalt(b, a)
    assert all(np.isfinite(v) for v in other.values()) and 0.0 <= other["layout"] <= 1.0
