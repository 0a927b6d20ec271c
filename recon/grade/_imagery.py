"""Evidence screenshots used as page imagery, found by perceptual hash (see ``policy``).

An image, crop or tile *matches* an evidence screenshot when both are informative and
both its pHash and dHash lie within ``limit`` bits of the evidence's. Four places are
checked, two by the image's own bytes and two by the pixels of the capture:

- **served image**: every served raster at least ``MIN_IMAGE_SIDE`` px on each side,
  painted or not;
- **inline image**: every raster the page paints from a ``data:`` URL, in any DOM
  snapshot of the attempt (an ``<img>``/``srcset`` choice, a CSS background layer of an
  element or of its ``::before``/``::after``, an SVG ``<image>``, a video poster, an
  ``<input type=image>``, ``<object>``/``<embed>``, ``border-image``,
  ``list-style-image``, ``content``; and the rasters an SVG ``data:`` URL embeds), at
  least ``MIN_IMAGE_SIDE`` px on each side;
- **painted box**: the render cropped to each paint site (``_paints``) at least
  ``MIN_IMAGE_SIDE`` px on each side. A *replaced* site (an image-like element, a canvas,
  an SVG ``<image>``...) that matches is a violation; an *unread background* site (a CSS
  image whose bytes the grader could not read: ``blob:``, SVG, cut by the snapshot) is
  one unless visible text (:mod:`recon.grade._ink`) shows inside its box;
- **render tile**: the candidate's full-page render cut into full-width tiles of each
  evidence image's aspect ratio (the last one bottom-aligned). A matching tile is a
  violation only when replaced sites cover at least ``COVER_SHARE`` of it (on a
  ``COVER_CELL``-px grid), or when no visible text shows inside it.

The first two rows need no waiver: an honest page never ships a copy of the evidence. A
background whose bytes were read and did not match costs nothing, whatever is drawn over
it: honest text over a background photo keeps its waiver.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from recon.grade import _dom, _paints
from recon.grade._dom import Box, Dom
from recon.grade._ink import shown_in, text_boxes
from recon.grade._paints import Site
from recon.grade.phash import ImageHash, distance, image_hash, tile_hashes

IMAGE_TAGS = _dom.IMAGE_TAGS
MIN_IMAGE_SIDE = 16
COVER_SHARE = 0.5
COVER_CELL = 8

Row = dict[str, Any]
Hashes = Mapping[str, ImageHash]


def evidence_rows(
    limit: int,
    images: Mapping[str, np.ndarray],
    render: np.ndarray | None,
    dom: Dom,
    evidence: Mapping[str, np.ndarray],
    snapshots: Sequence[Dom] = (),
) -> tuple[list[Row], dict[str, float]]:
    """``evidence_as_imagery`` rows, and counts of what was hashed (for the terms).

    ``dom`` is the snapshot of ``render``; ``snapshots`` are every snapshot of the
    attempt, read for the images they paint from ``data:`` URLs (``(dom,)`` when empty).
    """
    hashes = {name: image_hash(img) for name, img in sorted(evidence.items())}
    usable = {name: h for name, h in hashes.items() if h.informative}
    rows, served = _served(limit, images, usable)
    inline = _paints.inline_images(snapshots or (dom,))
    found, inlined = _inline(limit, inline, usable)
    rows += found
    tiles = boxes = 0
    if render is not None and usable:
        height, width = render.shape[:2]
        sites = _paints.sites(dom, [*images, *inline], (0, 0, width, height))
        texts = text_boxes(dom, render)
        found, boxes = _boxes(limit, render, texts, sites, usable)
        rows += found
        found, tiles = _tiles(limit, render, texts, evidence, usable, sites)
        rows += found
    counts = {
        "evidence_images": float(len(hashes)),
        "evidence_informative": float(len(usable)),
        "images_hashed": float(served),
        "inline_images_hashed": float(inlined),
        "painted_boxes_hashed": float(boxes),
        "render_tiles_hashed": float(tiles),
    }
    return rows, counts


def match(limit: int, h: ImageHash, evidence: Hashes) -> Row | None:
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


def _large(img: np.ndarray) -> bool:
    return min(img.shape[:2]) >= MIN_IMAGE_SIDE


def _served(
    limit: int, images: Mapping[str, np.ndarray], evidence: Hashes
) -> tuple[list[Row], int]:
    rows: list[Row] = []
    hashed = 0
    for url, img in sorted(images.items()):
        if not evidence or not _large(img):
            continue
        hashed += 1
        found = match(limit, image_hash(img), evidence)
        if found:
            rows.append(
                {"kind": "evidence_as_imagery", "source": "served image", "url": url} | found
            )
    return rows, hashed


def _inline(
    limit: int, inline: Mapping[str, tuple[Row, np.ndarray]], evidence: Hashes
) -> tuple[list[Row], int]:
    rows: list[Row] = []
    hashed = 0
    for url, (where, img) in sorted(inline.items()):
        if not evidence or not _large(img):
            continue
        hashed += 1
        found = match(limit, image_hash(img), evidence)
        if found:
            head = {"kind": "evidence_as_imagery", "source": "inline image"}
            rows.append(head | {"url": _paints.short(url)} | where | found)
    return rows, hashed


def _boxes(
    limit: int, render: np.ndarray, texts: Sequence[Box], sites: Sequence[Site], evidence: Hashes
) -> tuple[list[Row], int]:
    rows: list[Row] = []
    hashed = 0
    for site in sites:
        crop = _crop(render, site.box)
        if crop is None or not _large(crop):
            continue
        hashed += 1
        found = match(limit, image_hash(crop), evidence)
        if found is None:
            continue
        shown = 0 if site.replaced else shown_in(texts, site.box)
        if shown == 0:
            rows.append(
                {
                    "kind": "evidence_as_imagery",
                    "source": "painted box",
                    "tag": site.tag,
                    "via": site.via,
                    "box": list(site.box),
                    "replaced": site.replaced,
                }
                | found
            )
    return rows, hashed


def _crop(render: np.ndarray, box: Box) -> np.ndarray | None:
    height, width = render.shape[:2]
    x, y, w, h = box
    x0, y0, x1, y1 = max(0, x), max(0, y), min(width, x + w), min(height, y + h)
    if x1 <= x0 or y1 <= y0:
        return None
    return render[y0:y1, x0:x1]


def _tiles(
    limit: int,
    render: np.ndarray,
    texts: Sequence[Box],
    images: Mapping[str, np.ndarray],
    evidence: Hashes,
    sites: Sequence[Site],
) -> tuple[list[Row], int]:
    rows: list[Row] = []
    hashed = 0
    height, width = render.shape[:2]
    replaced = [s.box for s in sites if s.replaced]
    for name, ev_hash in evidence.items():
        ev_h, ev_w = images[name].shape[:2]
        tile_height = max(1, round(width * ev_h / ev_w))
        for top, h in tile_hashes(render, tile_height):
            hashed += 1
            found = match(limit, h, {name: ev_hash})
            if found is None:
                continue
            tile = (0, top, width, min(tile_height, height))
            cover, shown = image_cover(replaced, tile), shown_in(texts, tile)
            if cover >= COVER_SHARE or shown == 0:
                rows.append(
                    {
                        "kind": "evidence_as_imagery",
                        "source": "render tile",
                        "tile": list(tile),
                        "image_cover": cover,
                        "text_elements": shown,
                    }
                    | found
                )
    return rows, hashed


def image_cover(boxes: Sequence[Box], tile: Box) -> float:
    """Share of ``tile`` covered by ``boxes`` (replaced paint sites), on a COVER_CELL-px
    grid."""
    return float(_dom.cover(boxes, tile, COVER_CELL).mean())
