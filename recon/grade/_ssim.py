"""Mean SSIM with a uniform window, from exact window sums, in row bands and chunks.

Matches ``skimage.metrics.structural_similarity(x, y, win_size=7, data_range=255,
gaussian_weights=False, use_sample_covariance=True)``: the statistics of every
window that fits entirely inside the image (skimage's ``crop(S, pad)``), sample
covariance ``N / (N - 1)``, ``K1 = 0.01``, ``K2 = 0.03``.

Why it is exact. Inputs are integer luma values in units of ``1 / scale`` (the
global metric passes Rec. 601 luma times 1000). The four window sums ``Σx``,
``Σy``, ``Σxy`` and ``Σ(x² + y²)`` are sums of at most 49 integers below
``MAX_VALUE² = 2**40``, added in float64 by shifted slices (never a running or
cumulative sum), so every partial sum is an integer below 2**53 and exact. So
are the numerators ``N*Σxy - Σx*Σy`` and ``N*Σ(x² + y²) - Σx² - Σy²``; only
the final ratio is rounded, and identical images give exactly 1. Float32 is
not used: a 7x7 sum of luma * 4000 needs 26 bits.

Why it is fast. The moments of a chunk sit in flat float64 buffers, one image
row after another, so a 7-row window sum is four additions of contiguous slices
``width``, ``2 * width`` and ``4 * width`` apart (doubling: 1 + 2 + 4 rows), and a
7-column one four additions over all four moments at once of slices 1, 2 and 4
apart; the windows that wrap a row's end are computed and never read. Chunks of
``CHUNK_PIXELS`` keep the buffers in cache, the buffers are allocated once per
call, and window rows whose image rows are equal in both images are not computed
(they are exactly 1).

Memory. The image is read through ``rows(r0, r1)`` one band at a time; a band
of about ``BAND_PIXELS`` pixels plus ``window - 1`` overlapping rows, its SSIM
map, and the chunk buffers are the largest things held, whatever the page
height. Each band's map is summed as one contiguous float64 array, so the result
does not depend on ``CHUNK_PIXELS``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

K1 = 0.01
K2 = 0.03
DATA_RANGE = 255.0
WINDOW = 7
MAX_VALUE = 1 << 20
"""Inputs lie in [0, MAX_VALUE): every window sum stays an exact float64 integer."""
MAX_WIDTH = 1 << 18
"""Widest image accepted: one chunk row of buffers stays below ~300 MB."""
BAND_PIXELS = 1 << 19
"""Target pixels per band read from ``rows``: 364 rows of a 1440-px page."""
CHUNK_PIXELS = 1 << 15
"""Target pixels per chunk computed at once: 22 rows of a 1440-px page, ~1 MB a buffer."""
MOMENTS = 4
"""Σx, Σy, Σxy, Σ(x² + y²)."""

RowSource = Callable[[int, int], tuple[np.ndarray, np.ndarray]]
"""``rows(r0, r1)`` returns rows ``r0:r1`` of both images as 2-D integer arrays."""
BandSink = Callable[[int, np.ndarray, np.ndarray, np.ndarray], None]
"""``consume(t0, x, y, map)``: one band's rows of both images and its SSIM map."""
Window = tuple[int, int]


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
    total = 0.0

    def add(_t0: int, _x: np.ndarray, _y: np.ndarray, band: np.ndarray) -> None:
        nonlocal total
        total += float(band.sum(dtype=np.float64))

    tops, cols = ssim_bands(rows, height, width, scale, add)
    return total / (tops * cols)


def ssim_map(x: np.ndarray, y: np.ndarray, scale: int = 1) -> np.ndarray:
    """The SSIM of every whole window of two equal-shape 2-D integer images: an array of
    ``height - win_h + 1`` by ``width - win_w + 1``, whose mean is :func:`mean_ssim`. The
    site's difference heatmap is drawn from it (``recon.site.heatmap``)."""
    if x.shape != y.shape or x.ndim != 2:
        raise ValueError(f"ssim_map needs two equal 2-D shapes, got {x.shape} and {y.shape}")
    height, width = x.shape
    _check_size("ssim_map", height, width)
    bands: list[np.ndarray] = []

    def keep(_t0: int, _x: np.ndarray, _y: np.ndarray, band: np.ndarray) -> None:
        bands.append(band.copy())

    ssim_bands(lambda r0, r1: (x[r0:r1], y[r0:r1]), height, width, scale, keep)
    return np.concatenate(bands)


def ssim_bands(
    rows: RowSource, height: int, width: int, scale: int, consume: BandSink, multiple: int = 1
) -> Window:
    """Hand every band's SSIM map to ``consume(t0, x, y, map)``, band by band.

    ``map[i, j]`` is the SSIM of the window whose top-left pixel is ``(t0 + i, j)``;
    ``x`` and ``y`` are the band's rows of both images (``map.shape[0] + win_h - 1`` of
    them). Every ``t0`` is a multiple of ``multiple``. The map is a buffer reused by the
    next band: read it, do not keep it. Returns the number of window rows and columns.
    """
    _check_size("mean_ssim", height, width)
    win_h, win_w = window_shape(height, width)
    tops = height - win_h + 1
    band = max(multiple, BAND_PIXELS // width // multiple * multiple)
    work = _Work(min(band, tops), width, win_h, win_w, scale)
    for t0 in range(0, tops, band):
        t1 = min(tops, t0 + band)
        x, y = rows(t0, t1 + win_h - 1)
        consume(t0, x, y, work.band_map(x, y))
    return tops, width - win_w + 1


def _check_size(what: str, height: int, width: int) -> None:
    if not 1 <= width <= MAX_WIDTH or height < 1:
        raise ValueError(f"{what}: image {height}x{width} outside 1..{MAX_WIDTH} px wide")


class _Work:
    """Buffers for one image width and window, reused by every band and chunk."""

    def __init__(self, band: int, width: int, win_h: int, win_w: int, scale: int) -> None:
        self.width, self.win_h, self.win_w = width, win_h, win_w
        self.n = win_h * win_w
        self.c1 = (K1 * DATA_RANGE) ** 2 * self.n * self.n * scale * scale
        self.c2 = (K2 * DATA_RANGE) ** 2 * self.n * (self.n - 1) * scale * scale
        self.chunk = min(band, max(1, CHUNK_PIXELS // width))
        size = MOMENTS * (self.chunk + win_h - 1) * width + WINDOW  # spare tail: see _chunk
        self.moments, self.vertical, self.sums, self.pow2, self.pow4 = (
            np.zeros(size) for _ in range(5)
        )
        self.prod, self.squares = (np.zeros((self.chunk, width)) for _ in range(2))
        self.map = np.zeros((band, width - win_w + 1))

    def band_map(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """SSIM of every whole window of one band (rows ``x.shape[0] - win_h + 1`` tall).

        A window row whose ``win_h`` image rows are equal in ``x`` and ``y`` is filled
        with 1.0 without computing it: for equal windows ``Sx = Sy`` and ``Sxy = Sxx =
        Syy``, so both factors of the ratio are the same float and the computed value
        is exactly 1.0 too. The map, and so the score, is the same bit for bit.
        """
        tops = x.shape[0] - self.win_h + 1
        differ = np.concatenate(([0], np.cumsum(np.any(x != y, axis=1))))
        equal = differ[self.win_h :] == differ[:tops]
        edges = np.flatnonzero(np.diff(equal, prepend=~equal[0], append=~equal[-1]))
        for r0, r1 in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
            if equal[r0]:
                self.map[r0:r1] = 1.0
                continue
            for c0 in range(r0, r1, self.chunk):
                c1 = min(r1, c0 + self.chunk)
                rows = slice(c0, c1 + self.win_h - 1)
                self._chunk(x[rows], y[rows], self.map[c0:c1])
        return self.map[:tops]

    def _chunk(self, x: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
        """Write the SSIM of the whole windows of ``x`` and ``y`` into ``out``.

        With window sums ``Sx``, ``Sy`` and ``N`` pixels per window, skimage's
        ``(2 ux uy + C1)(2 vxy + C2) / ((ux² + uy² + C1)(vx + vy + C2))`` equals
        ``(2 Sx Sy + c1)(2 (N Sxy - Sx Sy) + c2)`` over
        ``(Sx² + Sy² + c1)(N Sxx + N Syy - Sx² - Sy² + c2)``, with ``c1 = C1 N² scale²``
        and ``c2 = C2 N (N - 1) scale²``.
        """
        rows, width = x.shape
        tops = rows - self.win_h + 1
        block = rows * width  # one moment's rows in the flat buffers
        flat = self.moments[: MOMENTS * block]
        m = flat.reshape(MOMENTS, rows, width)
        m[0] = x
        m[1] = y
        np.multiply(m[0], m[1], out=m[2])
        np.multiply(m[0], m[0], out=m[3])
        ysq = self.pow2[:block].reshape(rows, width)  # scratch until the window sums
        np.multiply(m[1], m[1], out=ysq)
        m[3] += ysq
        # Vertical sums, moment by moment, into `tops` rows each; then horizontal sums over
        # all four at once, reading up to win_w - 1 past the end: the buffers' spare tail
        # (finite, never summed) covers that, as it does the windows that wrap a row end.
        out_block = tops * width
        vertical = self.moments
        if self.win_h > 1:
            vertical = self.vertical
            for k in range(MOMENTS):
                src, dst = self.moments[k * block :], vertical[k * out_block :]
                self._window(src, out_block, width, self.win_h, dst)
        sums = self._window(vertical, MOMENTS * out_block, 1, self.win_w, self.sums)
        s = [sums[k * out_block : (k + 1) * out_block].reshape(tops, width) for k in range(MOMENTS)]
        sx, sy, sxy, sq2 = s
        prod, squares = self.prod[:tops], self.squares[:tops]
        np.multiply(sx, sy, out=prod)
        np.multiply(sx, sx, out=squares)
        np.multiply(sy, sy, out=sx)
        squares += sx
        a1, b1 = prod, squares  # a1 overwrites prod only after the covariance used it
        valid = width - self.win_w + 1
        if self.n == 1:  # a single pixel has no variance: SSIM is the luminance term alone
            a1 *= 2.0
            a1 += self.c1
            b1 += self.c1
            np.divide(a1[:, :valid], b1[:, :valid], out=out)
            return
        sxy *= self.n
        sxy -= prod
        sxy *= 2.0
        sxy += self.c2
        sq2 *= self.n
        sq2 -= squares
        sq2 += self.c2
        a1 *= 2.0
        a1 += self.c1
        b1 += self.c1
        a1 *= sxy
        b1 *= sq2
        np.divide(a1[:, :valid], b1[:, :valid], out=out)

    def _window(
        self, src: np.ndarray, length: int, stride: int, k: int, out: np.ndarray
    ) -> np.ndarray:
        """``out[i] = Σ_{j<k} src[i + j*stride]`` for ``i < length`` (k odd, at most 7)."""
        if k == 1:
            return src
        p2 = self.pow2
        n2 = length + (k - 2) * stride  # p2 is read up to (k - 2) * stride past i
        np.add(src[:n2], src[stride : n2 + stride], out=p2[:n2])
        if k == 3:
            np.add(p2[:length], src[2 * stride : length + 2 * stride], out=out[:length])
            return out
        p4 = self.pow4
        np.add(p2[:length], p2[2 * stride : length + 2 * stride], out=p4[:length])
        if k == 5:
            np.add(p4[:length], src[4 * stride : length + 4 * stride], out=out[:length])
            return out
        np.add(p4[:length], p2[4 * stride : length + 4 * stride], out=out[:length])
        out[:length] += src[6 * stride : length + 6 * stride]
        return out


def _odd_at_most(limit: int, side: int) -> int:
    size = min(limit, side)
    return size if size % 2 == 1 else size - 1
