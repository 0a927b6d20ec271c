"""Unit tests for recon.grade.phash (scipy's DCT is a test-only oracle)."""

from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy.fft import dctn

from recon.grade.phash import ImageHash, distance, image_hash, tile_hashes

EVIDENCE = (
    Path(__file__).resolve().parents[2] / "cases/html5-boilerplate/public/evidence/desktop.png"
)


def load(path: Path) -> np.ndarray:
    return np.asarray(Image.open(path).convert("RGB"))


def reencode(img: np.ndarray, fmt: str = "JPEG", size: tuple[int, int] | None = None) -> np.ndarray:
    pil = Image.fromarray(img)
    if size:
        pil = pil.resize(size, Image.Resampling.BILINEAR)
    buf = io.BytesIO()
    pil.save(buf, fmt, **({"quality": 60} if fmt == "JPEG" else {}))
    return np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))


def noise(shape: tuple[int, int], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (*shape, 3), dtype=np.uint8)


def test_phash_bits_match_a_scipy_dct_reference() -> None:
    for seed in range(5):
        img = noise((64, 96), seed)  # 2x3 pixel blocks per grid cell: plain block means
        luma = img.astype(np.float64) @ np.array([0.299, 0.587, 0.114])
        grid = luma.reshape(32, 2, 32, 3).mean(axis=(1, 3))
        low = dctn(grid, norm="ortho")[:8, :8]
        expected = int("".join("1" if b else "0" for b in (low > np.median(low)).ravel()), 2)
        assert image_hash(img).phash == expected


def test_distance_is_hamming() -> None:
    assert distance(0b1011, 0b0001) == 2 and distance(2**64 - 1, 0) == 64


def test_evidence_survives_reencoding_and_rescaling() -> None:
    ev = load(EVIDENCE)
    h = image_hash(ev)
    assert h.informative
    for copy in (reencode(ev), reencode(ev, "PNG", (1280, 800)), reencode(ev, "JPEG", (720, 450))):
        c = image_hash(copy)
        assert distance(h.phash, c.phash) <= 4 and distance(h.dhash, c.dhash) <= 4


def test_unrelated_images_are_far() -> None:
    ev = image_hash(load(EVIDENCE))
    for seed in range(4):
        other = image_hash(noise((300, 480), seed))
        assert distance(ev.phash, other.phash) > 12


def test_flat_images_are_not_informative() -> None:
    assert not image_hash(np.full((90, 144, 3), 255, dtype=np.uint8)).informative
    assert not image_hash(np.full((1, 1, 3), 7, dtype=np.uint8)).informative
    assert image_hash(noise((1, 5), 0)).informative  # a 1-px-tall image hashes fine


def test_identical_and_deterministic() -> None:
    img = noise((123, 77), 3)
    a, b = image_hash(img), image_hash(img.copy())
    assert a == b and isinstance(a, ImageHash) and len(a.hex()) == 33
    rgba = np.dstack([img, np.full(img.shape[:2], 255, dtype=np.uint8)])
    assert image_hash(rgba) == a


def test_tiles_cover_the_page_and_a_tall_page_stays_in_bounded_memory() -> None:
    page = np.full((20_000, 1440, 3), 255, dtype=np.uint8)
    page[::50, ::7] = 0
    tracemalloc.start()
    tiles = tile_hashes(page, 900)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert [t for t, _ in tiles] == [*range(0, 19_000, 900), 20_000 - 900]
    assert peak < 40 * 2**20, f"peak {peak / 2**20:.1f} MiB"
    assert tile_hashes(page[:1], 900)[0][0] == 0
    with pytest.raises(ValueError):
        tile_hashes(page[:10], 0)
