"""Perceptual hashes of screenshots and page imagery: a 64-bit DCT pHash and a 64-bit dHash.

Both follow the usual definitions (as in the ``imagehash`` package) on Rec. 601 luma:

- ``phash``: luma box-averaged to 32x32, the 8x8 lowest-frequency coefficients of its
  orthonormal DCT-II (DC included), one bit per coefficient: above their median.
- ``dhash``: luma box-averaged to 8 rows x 9 columns, one bit per horizontal neighbour
  pair: right brighter than left by more than ``DHASH_TIE`` grey levels (so flat areas
  give stable zero bits under re-encoding noise).

The ``distance`` of two hashes is the Hamming distance of their bits (0..64). Box
averaging works for any size, from a single pixel up (bins overlap when a side is
shorter than the grid), and reads the image in row bands, so a 20,000 px page costs a
few bands plus an ``H x 41`` integer table. A hash is ``informative`` only when the
32x32 luma spans at least ``MIN_RANGE`` grey levels: a flat image has no structure to
match and never matches anything.

Every sum is an exact integer; the DCT is an explicit product-and-sum (no BLAS), so the
bits do not depend on the thread count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

PHASH_GRID = 32
PHASH_BITS_SIDE = 8
DHASH_ROWS, DHASH_COLS = 8, 9
DHASH_TIE = 0.5
MIN_RANGE = 1.0
LUMA_MILLI = (299, 587, 114)
BAND_PIXELS = 1 << 19


@dataclass(frozen=True)
class ImageHash:
    """The two 64-bit hashes of one image, and whether it has structure enough to match."""

    phash: int
    dhash: int
    informative: bool

    def hex(self) -> str:
        return f"{self.phash:016x}:{self.dhash:016x}"


def distance(a: int, b: int) -> int:
    """Hamming distance of two 64-bit hashes."""
    return (a ^ b).bit_count()


def image_hash(img: np.ndarray) -> ImageHash:
    """Both hashes of a whole HxWx3/HxWx4 uint8 image (or HxW luma)."""
    tables = _column_tables(img)
    return _hash(tables, 0, img.shape[0])


def tile_hashes(img: np.ndarray, tile_height: int) -> list[tuple[int, ImageHash]]:
    """``(top, hash)`` of full-width tiles of ``tile_height`` rows covering the image.

    Tiles are top-aligned; when the height is not a multiple, the last tile is aligned
    to the bottom (overlapping its neighbour), so every tile has the full height. An
    image shorter than a tile is one tile.
    """
    if tile_height < 1:
        raise ValueError(f"tile_height must be positive, got {tile_height}")
    tables = _column_tables(img)
    height = img.shape[0]
    if height <= tile_height:
        return [(0, _hash(tables, 0, height))]
    tops = list(range(0, height - tile_height + 1, tile_height))
    if tops[-1] + tile_height < height:
        tops.append(height - tile_height)
    return [(top, _hash(tables, top, top + tile_height)) for top in tops]


def _hash(tables: dict[int, _Columns], r0: int, r1: int) -> ImageHash:
    grid = tables[PHASH_GRID].mean_grid(r0, r1, PHASH_GRID)
    small = tables[DHASH_COLS].mean_grid(r0, r1, DHASH_ROWS)
    informative = float(grid.max() - grid.min()) >= MIN_RANGE
    return ImageHash(phash=_phash_bits(grid), dhash=_dhash_bits(small), informative=informative)


def _phash_bits(grid: np.ndarray) -> int:
    basis = _dct_basis(PHASH_GRID, PHASH_BITS_SIDE)  # (8, 32)
    rows = (basis[:, None, :] * grid.T[None, :, :]).sum(axis=2)  # (8 u, 32 cols): over rows
    coef = (basis[:, None, :] * rows[None, :, :]).sum(axis=2).T  # (8 u, 8 v)
    return _pack(coef.ravel() > np.median(coef))


def _dhash_bits(small: np.ndarray) -> int:
    return _pack((small[:, 1:] - small[:, :-1]).ravel() > DHASH_TIE)


def _pack(bits: np.ndarray) -> int:
    value = 0
    for bit in bits.tolist():
        value = (value << 1) | int(bit)
    return value


def _dct_basis(n: int, keep: int) -> np.ndarray:
    """The first ``keep`` rows of the orthonormal DCT-II matrix of size ``n``."""
    u = np.arange(keep, dtype=np.float64)[:, None]
    x = np.arange(n, dtype=np.float64)[None, :]
    basis = np.cos(math.pi * (2 * x + 1) * u / (2 * n)) * math.sqrt(2 / n)
    basis[0] /= math.sqrt(2)
    return basis


def _edges(size: int, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Start/end of each of ``bins`` box-average bins over ``size`` items (never empty)."""
    i = np.arange(bins + 1, dtype=np.int64)
    cut = i * size // bins
    start = cut[:-1]
    end = np.maximum(cut[1:], start + 1)
    return start, end


@dataclass(frozen=True)
class _Columns:
    """Per image row, exact luma*1000 sums over each of a few column bins (H x bins)."""

    sums: np.ndarray
    widths: np.ndarray  # pixels per column bin

    def mean_grid(self, r0: int, r1: int, bins: int) -> np.ndarray:
        """Mean luma (grey levels) of ``bins`` row bins x the column bins, over rows r0:r1."""
        cum = np.zeros((r1 - r0 + 1, self.sums.shape[1]), dtype=np.int64)
        np.cumsum(self.sums[r0:r1], axis=0, out=cum[1:])
        start, end = _edges(r1 - r0, bins)
        count = (end - start)[:, None] * self.widths[None, :] * 1000
        return (cum[end] - cum[start]) / count


def _column_tables(img: np.ndarray) -> dict[int, _Columns]:
    """Column-binned luma sums for both hash grids, reading the image in row bands."""
    rgb = _check(img)
    height, width = rgb.shape[:2]
    step = max(1, BAND_PIXELS // width)
    tables = {}
    for bins in (PHASH_GRID, DHASH_COLS):
        start, end = _edges(width, bins)
        tables[bins] = _Columns(np.empty((height, bins), dtype=np.int64), end - start)
    for r0 in range(0, height, step):
        luma = _luma(rgb[r0 : r0 + step])
        cum = np.zeros((luma.shape[0], width + 1), dtype=np.int64)
        np.cumsum(luma, axis=1, out=cum[:, 1:])
        for bins, table in tables.items():
            start, end = _edges(width, bins)
            table.sums[r0 : r0 + step] = cum[:, end] - cum[:, start]
    return tables


def _luma(rgb: np.ndarray) -> np.ndarray:
    if rgb.ndim == 2:
        return rgb.astype(np.int64) * 1000
    r, g, b = LUMA_MILLI
    y = rgb[..., 0].astype(np.int64) * r
    y += rgb[..., 1].astype(np.int64) * g
    y += rgb[..., 2].astype(np.int64) * b
    return y


def _check(img: np.ndarray) -> np.ndarray:
    if not isinstance(img, np.ndarray) or img.dtype != np.uint8:
        raise ValueError("phash: expected a uint8 numpy image")
    if img.ndim == 3 and img.shape[2] in (3, 4):
        img = img[..., :3]
    elif img.ndim != 2:
        raise ValueError(f"phash: expected HxW, HxWx3 or HxWx4, got shape {img.shape}")
    if img.shape[0] < 1 or img.shape[1] < 1:
        raise ValueError(f"phash: empty image {img.shape}")
    return img
