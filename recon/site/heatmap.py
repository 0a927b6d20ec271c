"""The difference heatmap of a run page: where the Candidate's render differs from the
evidence, as the global visual metric sees it.

It is the per-pixel structural dissimilarity ``1 - SSIM`` of the two pages' Rec. 601
luma (uniform 7x7 windows, :func:`recon.grade._ssim.ssim_map`), aligned as the global
visual metric aligns them: never resized, the Candidate cropped or white-padded on the
right to the evidence width, the shorter page white-padded at the bottom. Each window's
value is given to its centre pixel; the border pixels a window cannot centre on take the
nearest centre's. Drawn as an overlay: the Candidate's render in faded grey, with red
laid over it in proportion to the dissimilarity.

It is not sealed: it reads the public evidence still and the Candidate's capture only,
never an oracle capture or a sealed region. A pure function: arrays in, arrays out; the
PNG encoding is fixed (no metadata, fixed compression), so equal inputs give equal bytes.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from recon.grade import ssim_map

LUMA_MILLI = np.array([299, 587, 114], dtype=np.int32)
"""Rec. 601 luma weights times 1000: integer luma, exact (as the global visual metric)."""
WHITE = 255
FADE = 0.35
"""How much of the Candidate's grey shows under the overlay (the rest is white)."""
RED = np.array([220.0, 0.0, 0.0])


def align(evidence: np.ndarray, candidate: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Both RGB pages on white canvases of the evidence width and the taller height."""
    height = max(evidence.shape[0], candidate.shape[0])
    width = evidence.shape[1]
    return _canvas(evidence, height, width), _canvas(candidate, height, width)


def _canvas(image: np.ndarray, height: int, width: int) -> np.ndarray:
    out = np.full((height, width, 3), WHITE, dtype=np.uint8)
    rows, cols = min(height, image.shape[0]), min(width, image.shape[1])
    out[:rows, :cols] = image[:rows, :cols, :3]
    return out


def luma(image: np.ndarray) -> np.ndarray:
    """Integer luma times 1000 of an RGB array."""
    return image[..., :3].astype(np.int32) @ LUMA_MILLI


def dissimilarity(evidence: np.ndarray, candidate: np.ndarray) -> np.ndarray:
    """Per-pixel ``1 - SSIM`` in [0, 1] (float32) over the aligned pages."""
    ev, cand = align(evidence, candidate)
    windows = ssim_map(luma(ev), luma(cand), scale=1000)
    top = (ev.shape[0] - windows.shape[0]) // 2
    left = (ev.shape[1] - windows.shape[1]) // 2
    bottom = ev.shape[0] - windows.shape[0] - top
    right = ev.shape[1] - windows.shape[1] - left
    full = np.pad(windows, ((top, bottom), (left, right)), mode="edge")
    return np.clip(1.0 - full, 0.0, 1.0).astype(np.float32)


def overlay(candidate: np.ndarray, heat: np.ndarray) -> np.ndarray:
    """The Candidate (aligned to ``heat``'s shape) in faded grey, red where ``heat`` is."""
    height, width = heat.shape
    grey = luma(_canvas(candidate, height, width)).astype(np.float64) / 1000.0
    base = WHITE - FADE * (WHITE - grey)
    alpha = heat.astype(np.float64)[..., None]
    out = base[..., None] * (1.0 - alpha) + RED * alpha
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def heatmap_png(evidence: np.ndarray, candidate: np.ndarray) -> bytes:
    """The overlay of one matrix point as PNG bytes."""
    return encode_png(overlay(candidate, dissimilarity(evidence, candidate)))


def encode_png(image: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(image, mode="RGB").save(out, format="PNG", compress_level=6)
    return out.getvalue()


def decode(data: bytes) -> np.ndarray | None:
    """A PNG or WebP as an RGB array, or None when it cannot be decoded."""
    try:
        with Image.open(io.BytesIO(data)) as img:
            return np.asarray(img.convert("RGB"))
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
