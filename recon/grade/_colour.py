"""The colour term of global visual: CIEDE2000 between matching tiles, weighted by chroma.

Both aligned pages (``_aligned``) are cut into ``TILE`` x ``TILE`` tiles (edge tiles are
partial); each tile's mean sRGB is taken to CIELAB (D65, ``skimage.color.rgb2lab``).
Then, in each direction (reference to Candidate, Candidate to reference), every tile
whose chroma ``C* = hypot(a*, b*)`` is at least ``CHROMA_MIN`` looks for its match among
the other page's 3 x 3 tiles around the same place (the one nearest in Lab, so a shift of
less than a tile is forgiven), and the difference is their CIEDE2000 ΔE
(``skimage.color.deltaE_ciede2000``). Within a direction tiles weigh their chroma::

    error_ref  = Σ C* ΔE00 / Σ C*      over the reference's chromatic tiles: is its colour kept?
    error_cand = Σ C* ΔE00 / Σ C*      over the Candidate's: does its colour belong?
    error      = the mean of the directions that have chromatic tiles
    colour     = 1 - min(1, error / DE_MAX)

So colour is judged where there is colour: a grey copy of a page whose brand colour is
a small red title loses it all, however small the title, and colour the reference lacks
costs as it would if the reference had it and the Candidate did not; each direction
counts half, so a large foreign colour does not hide that the reference's own colours
are kept. Grey against grey carries no weight here (lightness is the SSIM term's); when
neither page has a chromatic tile the term is not applicable (``colour_applicable`` 0)
and drops out of the mix.
"""

from __future__ import annotations

import math

import numpy as np
from skimage.color import deltaE_ciede2000, rgb2lab

from recon.grade._aligned import Aligned
from recon.grade._ssim import BAND_PIXELS

TILE = 16
CHROMA_MIN = 5.0
DE_MAX = 30.0
"""A chroma-weighted mean ΔE00 this large (a different hue, not a shade) leaves no colour."""
_NEAR = [(0, 0), (-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)]


def colour(aligned: Aligned) -> dict[str, float]:
    """The colour term of the aligned pair, and the figures behind it."""
    cand, ref = _tile_means(aligned)
    lab_c, lab_r = rgb2lab(cand), rgb2lab(ref)
    sum_r, err_r, tiles_r = _directed(lab_r, lab_c)
    sum_c, err_c, tiles_c = _directed(lab_c, lab_r)
    terms = {
        "colour_tile": float(TILE),
        "colour_tiles_reference": float(tiles_r),
        "colour_tiles_candidate": float(tiles_c),
        "colour_error_reference": err_r / sum_r if sum_r > 0 else 0.0,
        "colour_error_candidate": err_c / sum_c if sum_c > 0 else 0.0,
        "colour_de_max": DE_MAX,
    }
    directions = [err / total for err, total in ((err_r, sum_r), (err_c, sum_c)) if total > 0]
    if not directions:
        return terms | {"colour_error": 0.0, "colour": 1.0, "colour_applicable": 0.0}
    error = sum(directions) / len(directions)
    return terms | {
        "colour_error": error,
        "colour": 1.0 - min(1.0, error / DE_MAX),
        "colour_applicable": 1.0,
    }


def _tile_means(aligned: Aligned) -> tuple[np.ndarray, np.ndarray]:
    """Mean sRGB in [0, 1] of every tile of both aligned pages (grids of Ty x Tx x 3)."""
    height, width = aligned.height, aligned.width
    col_starts = np.arange(0, width, TILE)
    shape = (math.ceil(height / TILE), col_starts.size, 3)
    cand, ref = np.zeros(shape), np.zeros(shape)
    step = max(TILE, BAND_PIXELS // max(width, 1) // TILE * TILE)
    for r0 in range(0, height, step):
        r1 = min(height, r0 + step)
        a, b = aligned.rows(r0, r1)
        tiles = slice(r0 // TILE, math.ceil(r1 / TILE))
        cand[tiles] = _cell_sums(a, col_starts)
        ref[tiles] = _cell_sums(b, col_starts)
    heights = np.diff(np.append(np.arange(0, height, TILE), height))
    widths = np.diff(np.append(col_starts, width))
    area = np.outer(heights, widths)[..., None] * 255.0
    return cand / area, ref / area


def _cell_sums(rgb: np.ndarray, col_starts: np.ndarray) -> np.ndarray:
    """Per-tile RGB sums; a column of TILE uint8 values sums below 2**16 (uint16 rows)."""
    by_rows = np.add.reduceat(rgb, np.arange(0, rgb.shape[0], TILE), axis=0, dtype=np.uint16)
    return np.add.reduceat(by_rows, col_starts, axis=1, dtype=np.int64)


def _directed(own: np.ndarray, other: np.ndarray) -> tuple[float, float, int]:
    """Σ C*, Σ C* ΔE00 and the count over ``own``'s chromatic tiles, each against its
    nearest (in Lab) tile of ``other`` among the 3 x 3 around it."""
    chroma = np.hypot(own[..., 1], own[..., 2])
    ys, xs = np.nonzero(chroma >= CHROMA_MIN)
    if ys.size == 0:
        return 0.0, 0.0, 0
    rows, cols = other.shape[:2]
    near_y = np.clip(ys[:, None] + np.array([dy for dy, _ in _NEAR]), 0, rows - 1)
    near_x = np.clip(xs[:, None] + np.array([dx for _, dx in _NEAR]), 0, cols - 1)
    found = other[near_y, near_x]  # (n, 9, 3)
    mine = own[ys, xs]
    best = np.argmin(((found - mine[:, None, :]) ** 2).sum(axis=2), axis=1)
    delta = deltaE_ciede2000(mine, found[np.arange(ys.size), best])
    weight = chroma[ys, xs]
    return float(weight.sum()), float((weight * delta).sum()), int(ys.size)
