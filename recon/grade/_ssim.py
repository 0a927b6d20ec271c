"""Mean SSIM with a uniform window, computed from integer integral images in row bands.

Matches ``skimage.metrics.structural_similarity(x, y, win_size=7, data_range=255,
gaussian_weights=False, use_sample_covariance=True)``: the statistics of every
window that fits entirely inside the image (skimage's ``crop(S, pad)``), sample
covariance ``N / (N - 1)``, ``K1 = 0.01``, ``K2 = 0.03``.

Why integers. Inputs are integer luma values in units of ``1 / scale`` (the
global metric passes Rec. 601 luma times 1000). Window sums are taken from
``int64`` cumulative sums, so they are exact; the variance and covariance
numerators ``N*Σxy - Σx*Σy`` are exact as well. Every such number stays below
2**53 and so converts to float64 without rounding; only the final ratio is
rounded. Float32 integral images lose the variance entirely on a 1024-row band
(errors of ~10**3 against C2 = 58.5), so they are not used.

Memory. The image is read through ``rows(r0, r1)`` one band at a time; a band
of about ``BAND_PIXELS`` pixels plus ``window - 1`` overlapping rows is the
largest thing held, whatever the page height.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

K1 = 0.01
K2 = 0.03
DATA_RANGE = 255.0
WINDOW = 7
MAX_VALUE = 1 << 20
"""Inputs lie in [0, MAX_VALUE); with MAX_WIDTH this keeps every int64 sum exact."""
MAX_WIDTH = 1 << 18
BAND_PIXELS = 1 << 19
"""Target pixels per band: 364 rows of a 1440-px page, ~4 MB per int64 band array."""

RowSource = Callable[[int, int], tuple[np.ndarray, np.ndarray]]
"""``rows(r0, r1)`` returns rows ``r0:r1`` of both images as 2-D integer arrays."""


def window_shape(height: int, width: int) -> tuple[int, int]:
    """7x7, shrunk to the largest odd size that fits a side shorter than 7 (1-px pages)."""
    return _odd_at_most(WINDOW, height), _odd_at_most(WINDOW, width)


def mean_ssim(x: np.ndarray, y: np.ndarray, scale: int = 1) -> float:
    """Mean SSIM of two equal-shape 2-D integer images whose values are luma * ``scale``.

    Values must lie in ``[0, MAX_VALUE)`` for the window statistics to stay exact.
    """
    if x.shape != y.shape or x.ndim != 2:
        raise ValueError(f"mean_ssim needs two equal 2-D shapes, got {x.shape} and {y.shape}")
    if not (np.issubdtype(x.dtype, np.integer) and np.issubdtype(y.dtype, np.integer)):
        raise ValueError("mean_ssim needs integer images (luma * scale); round or scale first")
    height, width = x.shape
    return mean_ssim_rows(lambda r0, r1: (x[r0:r1], y[r0:r1]), height, width, scale)


def mean_ssim_rows(rows: RowSource, height: int, width: int, scale: int) -> float:
    """Mean SSIM over all whole windows, reading both images band by band from ``rows``."""
    if not 1 <= width <= MAX_WIDTH or height < 1:
        raise ValueError(f"mean_ssim: image {height}x{width} outside 1..{MAX_WIDTH} px wide")
    win_h, win_w = window_shape(height, width)
    tops = height - win_h + 1
    band = max(1, BAND_PIXELS // max(width, 1))
    total = 0.0
    for t0 in range(0, tops, band):
        t1 = min(tops, t0 + band)
        x, y = rows(t0, t1 + win_h - 1)
        total += float(_ssim_map(x, y, win_h, win_w, scale).sum(dtype=np.float64))
    return total / (tops * (width - win_w + 1))


def _ssim_map(x: np.ndarray, y: np.ndarray, win_h: int, win_w: int, scale: int) -> np.ndarray:
    """SSIM of every whole window in one band, as float64.

    With window sums ``Sx``, ``Sy`` and ``N`` pixels per window, skimage's
    ``(2 ux uy + C1)(2 vxy + C2) / ((ux² + uy² + C1)(vx + vy + C2))`` equals
    ``(2 Sx Sy + c1)(2 (N Sxy - Sx Sy) + c2) / ((Sx² + Sy² + c1)(N Sxx + N Syy - Sx² - Sy² + c2))``
    with ``c1 = C1 N² scale²`` and ``c2 = C2 N (N - 1) scale²``; every integer
    term is exact, so identical images give exactly 1.
    """
    n = win_h * win_w
    x = x.astype(np.int64)
    y = y.astype(np.int64)
    sx = _box(x, win_h, win_w)
    sy = _box(y, win_h, win_w)
    prod = sx * sy
    squares = sx * sx
    squares += sy * sy
    c1 = (K1 * DATA_RANGE) ** 2 * n * n * scale * scale
    a1 = prod.astype(np.float64)
    a1 *= 2.0
    a1 += c1
    b1 = squares.astype(np.float64)
    b1 += c1
    if n == 1:  # a single pixel has no variance: SSIM is the luminance term alone
        a1 /= b1
        return a1
    c2 = (K2 * DATA_RANGE) ** 2 * n * (n - 1) * scale * scale
    cov = _box(x * y, win_h, win_w)
    cov *= n
    cov -= prod
    var = _box(x * x + y * y, win_h, win_w)
    var *= n
    var -= squares
    a2 = cov.astype(np.float64)
    a2 *= 2.0
    a2 += c2
    b2 = var.astype(np.float64)
    b2 += c2
    a1 *= a2
    b1 *= b2
    a1 /= b1
    return a1


def _box(a: np.ndarray, win_h: int, win_w: int) -> np.ndarray:
    """Exact sums over every whole ``win_h`` x ``win_w`` window, via cumulative sums."""
    rows, cols = a.shape
    c = np.empty((rows + 1, cols), dtype=np.int64)
    c[0] = 0
    np.cumsum(a, axis=0, out=c[1:])
    down = c[win_h:] - c[:-win_h]
    c = np.empty((down.shape[0], cols + 1), dtype=np.int64)
    c[:, 0] = 0
    np.cumsum(down, axis=1, out=c[:, 1:])
    return c[:, win_w:] - c[:, :-win_w]


def _odd_at_most(limit: int, side: int) -> int:
    size = min(limit, side)
    return size if size % 2 == 1 else size - 1
