"""Two screenshots on one grid: the reference's width, the Candidate's rows through a row map.

Nothing is resized. Aligned row ``i`` of the Candidate is its row ``row_map[i]`` (white
when that is -1), cropped or white-padded on the right to the reference's width; aligned
row ``i`` of the reference is its own row ``i`` (white below its last row). Rows are
read a band at a time, so no full-page copy is ever made.
"""

from __future__ import annotations

import numpy as np

WHITE = 255
LUMA_MILLI = (299, 587, 114)
"""Rec. 601 luma weights times 1000: integer luma is exact, in units of 1/1000."""


class Aligned:
    """The aligned pair; ``rows(r0, r1)`` gives both pages' aligned rows as HxWx3 uint8."""

    def __init__(self, cand: np.ndarray, ref: np.ndarray, row_map: np.ndarray) -> None:
        self.cand, self.ref, self.row_map = cand, ref, row_map
        self.height, self.width = int(row_map.shape[0]), int(ref.shape[1])

    def rows(self, r0: int, r1: int) -> tuple[np.ndarray, np.ndarray]:
        return self._cand_rows(r0, r1), _padded(self.ref, r0, r1, self.width)

    def _cand_rows(self, r0: int, r1: int) -> np.ndarray:
        index = self.row_map[r0:r1]
        first = int(index[0]) if index.size else -1
        if first >= 0 and int(index[-1]) - first == r1 - r0 - 1 and _consecutive(index):
            return _padded(self.cand, first, first + r1 - r0, self.width)
        out = np.full((r1 - r0, self.width, 3), WHITE, dtype=np.uint8)
        have = index >= 0
        cols = min(self.width, self.cand.shape[1])
        out[have, :cols] = self.cand[index[have], :cols]
        return out


def _consecutive(index: np.ndarray) -> bool:
    return bool(np.all(np.diff(index) == 1))


def _padded(img: np.ndarray, r0: int, r1: int, width: int) -> np.ndarray:
    """Rows r0:r1 of ``img`` cropped or white-padded on the right/bottom to ``width``."""
    height, own_width = img.shape[:2]
    if own_width == width and r1 <= height:
        return img[r0:r1]
    out = np.full((r1 - r0, width, 3), WHITE, dtype=np.uint8)
    have = max(0, min(r1, height) - r0)
    cols = min(own_width, width)
    out[:have, :cols] = img[r0 : r0 + have, :cols]
    return out


def luma(rgb: np.ndarray, pool: int) -> np.ndarray:
    """Rec. 601 luma * 1000 as int32, pooled over ``pool`` x ``pool`` blocks (1, 2 or 4; a
    partial last row or column of blocks is dropped): summed, and for 4 divided by 4 with
    the remainder dropped, so every value stays below ``_ssim.MAX_VALUE``. In units of
    1 / :func:`luma_scale` luma levels."""
    r, g, b = LUMA_MILLI
    y = np.multiply(rgb[..., 0], r, dtype=np.int32)
    y += np.multiply(rgb[..., 1], g, dtype=np.int32)
    y += np.multiply(rgb[..., 2], b, dtype=np.int32)
    if pool == 1:
        return y
    rows, cols = y.shape[0] // pool * pool, y.shape[1] // pool * pool
    if pool == 2:
        y = y[0:rows:2] + y[1:rows:2]
        return y[:, 0:cols:2] + y[:, 1:cols:2]
    if pool != 4:
        raise ValueError(f"luma: pool {pool} is not 1, 2 or 4")
    y = y[:rows].reshape(rows // 4, 4, y.shape[1]).sum(axis=1, dtype=np.int32)
    y = y[:, :cols].reshape(rows // 4, cols // 4, 4).sum(axis=2, dtype=np.int32)
    y //= 4
    return y


def luma_scale(pool: int) -> int:
    """What :func:`luma` multiplies a mean luma level by, for ``pool``."""
    return 1000 * pool * pool // (4 if pool == 4 else 1)
