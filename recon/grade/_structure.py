"""The SSIM term of global visual: mean SSIM over tiles, weighted by what the tiles hold.

The SSIM map is ``recon.grade._ssim``'s (Rec. 601 luma, uniform 7x7 window, exact window
sums), computed on the aligned pair (``_aligned``) after ``POOL`` x ``POOL`` mean pooling
(``_aligned.luma``; smaller pages pool less): a 7x7 window then spans 28 page pixels, so
the term judges local structure at the grain of words, lines and boxes, and a line of
text one or two pixels off (another line height, another rounding) is not a lost line.
The map is cut into ``TILE`` x ``TILE`` tiles (pooled pixels: ``TILE * POOL`` page
pixels); each tile's mean SSIM counts with the weight

    w = W_FLOOR + log(1 + (var_ref + var_cand) / INFO_C)

where ``var`` is the luma variance of the tile's pixels in each page (levels 0..255)
and ``INFO_C`` is SSIM's own ``C2``. This is the information-content weighting of
IW-SSIM (Wang and Li, 2011) at tile grain: text, edges and images count, and a tile
flat in both pages (margins, a plain background) barely does. So a nearly blank page is
not rewarded for matching the reference's empty background, and a gradient, whose
tiles are nearly flat, weighs little next to the text laid on it.

    ssim = Σ w * tile_ssim / Σ w

Identical pages give exactly 1 (every window is exactly 1, see ``_ssim``).
"""

from __future__ import annotations

import numpy as np

from recon.grade._aligned import Aligned, luma, luma_scale
from recon.grade._ssim import BAND_PIXELS, K2, ssim_bands, window_shape

POOL = 4
TILE = 4
W_FLOOR = 0.001
INFO_C = (K2 * 255.0) ** 2


def structure(aligned: Aligned) -> dict[str, float]:
    """The weighted mean SSIM of the aligned pair, and the figures behind it."""
    height, width = aligned.height, aligned.width
    pool = next(p for p in (POOL, 2, 1) if min(height, width) >= p)
    rows, cols = height // pool, width // pool

    step = max(1, BAND_PIXELS // max(1, width) // pool)  # pooled rows per read

    def luma_rows(r0: int, r1: int) -> tuple[np.ndarray, np.ndarray]:
        """Pooled rows r0:r1 of both pages, read about BAND_PIXELS page pixels at a time."""
        out = np.empty((2, r1 - r0, cols), dtype=np.int32)
        for s0 in range(r0, r1, step):
            s1 = min(r1, s0 + step)
            for k, img in enumerate(aligned.rows(s0 * pool, s1 * pool)):
                out[k, s0 - r0 : s1 - r0] = luma(img, pool)[:, :cols]
        return out[0], out[1]

    scale = luma_scale(pool)
    win_rows, win_cols = window_shape(rows, cols)
    sums = _Weighted(cols - win_cols + 1, win_rows // 2, win_cols // 2, scale)
    ssim_bands(luma_rows, rows, cols, scale, sums.add, multiple=TILE)
    return sums.result() | {
        "ssim_pool": pool,
        "ssim_tile": TILE,
        "ssim_window_rows": win_rows,
        "ssim_window_cols": win_cols,
    }


class _Weighted:
    """Σ w * tile SSIM, Σ w, Σ SSIM and the window count, accumulated band by band.

    A tile is ``TILE`` x ``TILE`` windows of the map; its weight comes from the pixels at
    those windows' centres in both pages (the window's top-left plus its half size).
    Bands start at multiples of ``TILE``, so no tile straddles two bands.
    """

    def __init__(self, cols: int, half_h: int, half_w: int, scale: int) -> None:
        self.cols, self.half_h, self.half_w = cols, half_h, half_w
        self.col_starts = np.arange(0, cols, TILE)
        self.widths = np.diff(np.append(self.col_starts, cols))
        self.info = float(scale) * float(scale) * INFO_C
        self.weighted = self.weight = self.plain = self.windows = 0.0

    def add(self, _t0: int, x: np.ndarray, y: np.ndarray, band: np.ndarray) -> None:
        n = band.shape[0]
        starts = np.arange(0, n, TILE)
        count = np.outer(np.diff(np.append(starts, n)), self.widths).astype(np.float64)
        ssim = self._tiles(band, starts) / count
        var = np.zeros_like(ssim)
        for img in (x, y):
            centres = img[self.half_h : self.half_h + n, self.half_w : self.half_w + self.cols]
            pixels = centres.astype(np.float64)
            mean = self._tiles(pixels, starts) / count
            pixels *= pixels
            var += self._tiles(pixels, starts) / count - mean * mean
        weight = W_FLOOR + np.log1p(np.maximum(var, 0.0) / self.info)
        self.weighted += float((weight * ssim).sum())
        self.weight += float(weight.sum())
        self.plain += float(band.sum(dtype=np.float64))
        self.windows += float(band.size)

    def _tiles(self, values: np.ndarray, starts: np.ndarray) -> np.ndarray:
        by_cols = np.add.reduceat(values, self.col_starts, axis=1)
        return np.add.reduceat(by_cols, starts, axis=0)

    def result(self) -> dict[str, float]:
        return {
            "ssim": max(0.0, self.weighted / self.weight),
            "ssim_unweighted": self.plain / self.windows,
            "ssim_weight_sum": self.weight,
        }
