"""The page at a glance: layout, palette and extent, as a person sees two pages side by side.

People judging real reconstructions look at a page whole and small: the top of it, a
column a few hundred pixels wide (the study behind issue 28 showed raters REF | A | B,
each column 400 px wide and 2,400 px tall). What decides for them is the arrangement of
blocks (columns, side panels, bands), the colours and how far the page runs, more than
pixel detail. Each page is read as such a *view*: its top ``VIEW_ROWS`` x its own width
rows (six screens' widths), box-filtered to ``VIEW_WIDTH`` px wide (a narrower page, a
390 px mobile still, is read at its own width). Then:

- ``layout``: where the ink sits across the page. Each view is cut into ``CELL`` px
  cells; a cell is *inked* when its luma spans more than ``INK_RANGE`` (text, borders,
  an image's detail; a flat fill is not ink). The share of inked cells in each of
  ``COLUMNS`` vertical strips, normalised to sum to 1, is the page's column profile;
  ``layout = 1 - ½ Σ |p_cand - p_ref|`` (1: the same columns, 0: ink in other strips
  altogether). Two columns against one stacked column, a centred page against a left
  dump, a side panel that is missing: each moves the profile. Independent of how much
  text there is and of the order of sections.
- ``palette``: the histogram intersection of the two views' colours, sRGB quantised to
  ``LEVELS`` levels per channel, averaged over ``OFFSETS`` grids shifted by a fraction
  of a level (one grid alone decides by where its bin edges fall: a shade across an edge
  counts as another colour). Background, brand colour and how much of each.
- ``shape``: the arrangement of the ink in each page's own inked height. The view's rows
  down to its last ink are cut into ``SHAPE_ROWS`` equal bands and its width into
  ``SHAPE_COLUMNS`` strips; the share of the inked cells in each of those cells is the
  page's shape; ``shape = 1 - ½ Σ |s_cand - s_ref|``. A shorter page with the same
  arrangement (header band, two columns, footer) keeps it, where ``extent`` sees only that
  it is shorter; the image path, which has no DOM to align content by, reads its
  arrangement from it (issue 28).
- ``extent``: how far down each view its ink reaches, the shorter reach over the longer:
  a page that stops after its header, or runs on three times as long, within the view.
  ``layout`` and ``extent`` are not applicable when neither view holds ink (two flat
  pages differ only in colour: ``palette``).
- ``ink_ratio``: the Candidate's inked cells over the reference's, in the views; the
  image path's guard against a blank or near-blank page (``global_visual``).

Blind to: what the text says (the content path's ``coverage`` guard and ``position``
read the DOM), the order of sections, rows below the view, and detail smaller than a
cell. Cost: one box resize of the top of each page and a few histograms.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from recon.grade._aligned import LUMA_MILLI, WHITE

VIEW_WIDTH = 400
VIEW_ROWS = 6
"""A view holds the top ``VIEW_ROWS`` x width rows of a page: 2,400 px at 400 px wide."""
CELL = 4
INK_RANGE = 24
"""A view cell whose luma spans at most this (of 255) is flat: no ink."""
COLUMNS = 40
SHAPE_ROWS = 4
SHAPE_COLUMNS = 8
LEVELS = 8
OFFSETS = 4


def view(img: np.ndarray) -> np.ndarray:
    """The top of a page, ``VIEW_WIDTH`` px wide (HxWx3 uint8); a page no wider is read
    as it is (a 390 px mobile still is its own view: no upscaling)."""
    width = img.shape[1]
    top = np.ascontiguousarray(img[: VIEW_ROWS * width, :, :3])
    if width <= VIEW_WIDTH:
        return top
    rows = max(1, round(top.shape[0] * VIEW_WIDTH / width))
    resized = Image.fromarray(top).resize((VIEW_WIDTH, rows), Image.Resampling.BOX)
    return np.asarray(resized)


def gestalt(cand: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    """The layout, shape, palette and extent terms of two full-page stills, and the ink
    ratio.

    The Candidate is first cropped or white-padded on the right to the reference's width
    (as the aligned terms read it): only what lies within the reference's width is seen.
    """
    a, b = view(_to_width(cand, ref.shape[1])), view(ref)
    ink_a, ink_b = inked(a), inked(b)
    reach_a, reach_b = _reach(ink_a), _reach(ink_b)
    either = bool(reach_a or reach_b)
    return {
        "layout": layout(ink_a, ink_b) if either else 1.0,
        "layout_applicable": float(either),
        "palette": palette(a, b),
        "shape": shape(ink_a[:reach_a], ink_b[:reach_b]) if either else 1.0,
        "shape_applicable": float(either),
        "extent": min(reach_a, reach_b) / max(reach_a, reach_b) if either else 1.0,
        "extent_applicable": float(either),
        "ink_ratio": float(ink_a.sum()) / float(ink_b.sum()) if ink_b.any() else 1.0,
        "view_rows_candidate": float(a.shape[0]),
        "view_rows_reference": float(b.shape[0]),
    }


def _to_width(img: np.ndarray, width: int) -> np.ndarray:
    rows = img[: VIEW_ROWS * width, :, :3]
    if rows.shape[1] >= width:
        return rows[:, :width]
    out = np.full((rows.shape[0], width, 3), WHITE, dtype=np.uint8)
    out[:, : rows.shape[1]] = rows
    return out


def _reach(ink: np.ndarray) -> int:
    """How far down a view its ink reaches: the last inked cell row, plus one (0: none)."""
    rows = np.flatnonzero(ink.any(axis=1))
    return int(rows[-1]) + 1 if rows.size else 0


def inked(img: np.ndarray) -> np.ndarray:
    """Which ``CELL`` x ``CELL`` cells of a view hold ink (their luma spans > INK_RANGE)."""
    r, g, b = LUMA_MILLI
    luma = img[..., 0].astype(np.int32) * r  # luma in thousandths: exact integers
    luma += img[..., 1].astype(np.int32) * g
    luma += img[..., 2].astype(np.int32) * b
    h, w = (luma.shape[0] // CELL) * CELL, (luma.shape[1] // CELL) * CELL
    blocks = luma[:h, :w].reshape(h // CELL, CELL, w // CELL, CELL).transpose(0, 2, 1, 3)
    cells = blocks.reshape(h // CELL, w // CELL, CELL * CELL)
    spread = cells.max(axis=2) - cells.min(axis=2)
    return np.asarray(spread > INK_RANGE * 1000)


def layout(ink_a: np.ndarray, ink_b: np.ndarray) -> float:
    """1 - half the L1 distance between the two column profiles of ink."""
    pa, pb = _profile(ink_a), _profile(ink_b)
    if pa is None or pb is None:
        return 1.0 if pa is None and pb is None else 0.0
    return float(1.0 - 0.5 * np.abs(pa - pb).sum())


def shape(ink_a: np.ndarray, ink_b: np.ndarray) -> float:
    """1 - half the L1 distance between the two pages' shapes (module docstring); each
    view is given down to its last inked row."""
    sa, sb = _shape(ink_a), _shape(ink_b)
    if sa is None or sb is None:
        return 1.0 if sa is None and sb is None else 0.0
    return float(1.0 - 0.5 * np.abs(sa - sb).sum())


def _shape(ink: np.ndarray) -> np.ndarray | None:
    if ink.size == 0 or not ink.any():
        return None
    # a view shorter or narrower than the grid leaves some of its cells empty
    counts = np.array(
        [[c.sum() for c in np.array_split(band, SHAPE_COLUMNS, axis=1)]
         for band in np.array_split(ink, SHAPE_ROWS, axis=0)],
        dtype=np.int64,
    )  # fmt: skip
    return counts / counts.sum()


def _profile(ink: np.ndarray) -> np.ndarray | None:
    if ink.size == 0 or not ink.any():
        return None
    share = ink.mean(axis=0)
    # a view narrower than COLUMNS cells has a strip per cell column
    strips = np.array([s.mean() for s in np.array_split(share, min(COLUMNS, share.size))])
    return strips / strips.sum()


def palette(a: np.ndarray, b: np.ndarray) -> float:
    """The mean over ``OFFSETS`` shifted grids of the colour histograms' intersection
    (in integer counts, so two equal views give exactly 1)."""
    na, nb = a.shape[0] * a.shape[1], b.shape[0] * b.shape[1]
    fine_a, fine_b = _fine(a), _fine(b)
    shared = 0
    for shift in range(OFFSETS):
        coarse_a, coarse_b = _coarse(fine_a, shift), _coarse(fine_b, shift)
        shared += int(np.minimum(coarse_a * nb, coarse_b * na).sum())
    return shared / (OFFSETS * na * nb)


FINE = LEVELS * OFFSETS
"""Each view is counted once in ``FINE`` levels per channel; a grid shifted by ``k``
fine levels is a sum of those counts (level ``(f + k) // OFFSETS`` of fine level ``f``),
the same as quantising the pixels shifted by ``k * 256 / FINE``."""


def _fine(img: np.ndarray) -> np.ndarray:
    q = (img.reshape(-1, 3) // (256 // FINE)).astype(np.int32)  # FINE divides 256: exact
    codes = (q[:, 0] * FINE + q[:, 1]) * FINE + q[:, 2]
    return np.bincount(codes, minlength=FINE**3).reshape(FINE, FINE, FINE)


def _coarse(fine: np.ndarray, shift: int) -> np.ndarray:
    """The counts of a grid shifted by ``shift`` fine levels, ``LEVELS + 1`` per channel."""
    starts = np.maximum(np.arange(0, FINE + 1, OFFSETS) - shift, 0)
    edges = starts[starts < FINE]  # coarse level c holds fine levels 4c - shift .. 4c - shift + 3
    out = fine
    for axis in range(3):
        out = np.add.reduceat(out, edges, axis=axis)
    return out
