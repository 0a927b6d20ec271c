"""Evidence screenshots used as page imagery, found by perceptual hash (see ``policy``).

An image or tile *matches* an evidence screenshot when both are informative and both
its pHash and dHash lie within ``limit`` bits of the evidence's. Two places are checked:

- every served raster image at least ``MIN_IMAGE_SIDE`` px on each side;
- the candidate's full-page render, cut into full-width tiles of each evidence
  image's aspect ratio (the last one bottom-aligned). A matching tile is a violation
  only when image-like elements (``IMAGE_TAGS``) cover at least ``COVER_SHARE`` of it
  (on a ``COVER_CELL``-px grid), or when no visible text element (own text,
  non-transparent colour) touches it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from recon.grade import _dom
from recon.grade._dom import Box, Dom
from recon.grade.phash import ImageHash, distance, image_hash, tile_hashes

IMAGE_TAGS = _dom.IMAGE_TAGS
MIN_IMAGE_SIDE = 16
COVER_SHARE = 0.5
COVER_CELL = 8

Row = dict[str, Any]


def evidence_rows(
    limit: int,
    images: Mapping[str, np.ndarray],
    render: np.ndarray | None,
    dom: Dom,
    evidence: Mapping[str, np.ndarray],
) -> tuple[list[Row], dict[str, float]]:
    """``evidence_as_imagery`` rows, and counts of what was hashed (for the terms)."""
    hashes = {name: image_hash(img) for name, img in sorted(evidence.items())}
    usable = {name: h for name, h in hashes.items() if h.informative}
    rows, served = _served(limit, images, usable)
    tiles = 0
    if render is not None and usable:
        found, tiles = _tiles(limit, render, dom, evidence, usable)
        rows += found
    counts = {
        "evidence_images": float(len(hashes)),
        "evidence_informative": float(len(usable)),
        "images_hashed": float(served),
        "render_tiles_hashed": float(tiles),
    }
    return rows, counts


def match(limit: int, h: ImageHash, evidence: Mapping[str, ImageHash]) -> Row | None:
    """The closest evidence image within ``limit`` on both hashes, if any."""
    if not h.informative:
        return None
    best: tuple[int, int, str] | None = None
    for name, ev in evidence.items():
        p, d = distance(h.phash, ev.phash), distance(h.dhash, ev.dhash)
        if max(p, d) <= limit and (best is None or (p, d) < best[:2]):
            best = (p, d, name)
    if best is None:
        return None
    return {
        "evidence": best[2],
        "phash_distance": best[0],
        "dhash_distance": best[1],
        "limit": limit,
    }


def _served(
    limit: int, images: Mapping[str, np.ndarray], evidence: Mapping[str, ImageHash]
) -> tuple[list[Row], int]:
    rows: list[Row] = []
    hashed = 0
    for url, img in sorted(images.items()):
        if not evidence or min(img.shape[:2]) < MIN_IMAGE_SIDE:
            continue
        hashed += 1
        found = match(limit, image_hash(img), evidence)
        if found:
            rows.append(
                {"kind": "evidence_as_imagery", "source": "served image", "url": url} | found
            )
    return rows, hashed


def _tiles(
    limit: int,
    render: np.ndarray,
    dom: Dom,
    images: Mapping[str, np.ndarray],
    evidence: Mapping[str, ImageHash],
) -> tuple[list[Row], int]:
    rows: list[Row] = []
    hashed = 0
    height, width = render.shape[:2]
    for name, ev_hash in evidence.items():
        ev_h, ev_w = images[name].shape[:2]
        tile_height = max(1, round(width * ev_h / ev_w))
        for top, h in tile_hashes(render, tile_height):
            hashed += 1
            found = match(limit, h, {name: ev_hash})
            if found is None:
                continue
            tile = (0, top, width, min(tile_height, height))
            cover, texts = image_cover(dom, tile), visible_texts(dom, tile)
            if cover >= COVER_SHARE or texts == 0:
                rows.append(
                    {
                        "kind": "evidence_as_imagery",
                        "source": "render tile",
                        "tile": list(tile),
                        "image_cover": cover,
                        "text_elements": texts,
                    }
                    | found
                )
    return rows, hashed


def image_cover(dom: Dom, tile: Box) -> float:
    """Share of ``tile`` covered by image-like elements, on a COVER_CELL-px grid."""
    boxes = (_dom.box_of(e) for e in dom if e.get("tag") in IMAGE_TAGS)
    return float(_dom.cover(boxes, tile, COVER_CELL).mean())


def visible_texts(dom: Dom, tile: Box) -> int:
    """Elements with own text and a non-transparent colour whose box touches ``tile``."""
    return sum(
        1
        for e in dom
        if _dom.own_text(e)
        and not _dom.transparent(str(e.get("color") or ""))
        and _dom.overlap(_dom.box_of(e), tile) > 0
    )
