"""Content blocks of a page: what its DOM snapshot says it holds, confirmed by its pixels.

A *block* is an element of the DOM snapshot (``recon.grade._dom``) that carries content:

- a **text** block: an element with own text (NFKC, case-folded, whitespace collapsed);
- a **replaced** block: an element without own text whose tag is in :data:`REPLACED`
  (images, vector graphics, canvases, media, frames, form fields) or whose role is an
  image.

A block is **shown** when its box, clipped to the page image, keeps at least one pixel
and the pixels inside it (inset by one pixel when it is at least 4 px on a side, so a
parent's border on its edge does not count) are not flat: their Rec. 601 luma spans more
than :data:`FLAT_RANGE`. The DOM alone cannot say this: text hidden by ``visibility``,
``opacity``, its own colour or an overlay still has a box, but no pixels of its own.
Boxes larger than :data:`SAMPLE_PIXELS` are read on a regular sub-grid (every ``s``-th
row and column), so no block costs more than that many pixels.

Each block weighs what a reader would call its amount of content:

- text: its characters times its font size over 16 px, clamped to
  [:data:`FONT_SCALE_MIN`, :data:`FONT_SCALE_MAX`] (a heading's word counts for more
  than a footnote's, not quadratically more);
- replaced: ``sqrt(w * h) / REPLACED_PX``, clamped to [1, :data:`REPLACED_CAP`] (a
  400 x 300 image counts like 43 characters of body text, at most like 64).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from recon.grade import _dom
from recon.grade._dom import Dom, Element

REPLACED = frozenset(
    {"img", "svg", "canvas", "video", "iframe", "embed", "object", "input", "textarea", "select"}
)
IMAGE_ROLES = frozenset({"img", "image", "graphics-document"})
FLAT_RANGE = 8
"""Luma levels (0..255) a shown block's pixels must span, at least."""
SAMPLE_PIXELS = 1 << 14
FONT_SCALE_MIN, FONT_SCALE_MAX = 0.5, 5.0
BODY_FONT_PX = 16.0
REPLACED_PX = 8.0
REPLACED_CAP = 64.0
_PX = re.compile(r"^\s*([0-9.]+)px\s*$")


@dataclass(frozen=True)
class Block:
    """One content-carrying element: where it is, what it says, what it weighs."""

    index: int  # position in the snapshot (document order)
    kind: str  # "text" or the replaced element's tag
    text: str  # normalised own text; for replaced blocks, the normalised accessible name
    box: _dom.Box  # clipped to the page image
    weight: float
    face: str = ""  # text: the first family its computed font-family names, case-folded

    @property
    def area(self) -> int:
        return self.box[2] * self.box[3]


@dataclass(frozen=True)
class Blocks:
    """A page's shown blocks, and how many blocks its DOM had that its pixels hide."""

    shown: list[Block]
    hidden: int


def blocks(dom: Dom, image: np.ndarray) -> Blocks:
    """The shown content blocks of a page (``image``: HxWx3 uint8, its full-page still)."""
    shown: list[Block] = []
    hidden = 0
    height, width = image.shape[:2]
    for index, element in enumerate(dom):
        found = _block(index, element, width, height)
        if found is None:
            continue
        if _flat(image, found.box):
            hidden += 1
        else:
            shown.append(found)
    return Blocks(shown=shown, hidden=hidden)


def total(found: Sequence[Block]) -> float:
    return math.fsum(b.weight for b in found)


def _block(index: int, element: Element, width: int, height: int) -> Block | None:
    box = _clip(_dom.box_of(element), width, height)
    if box is None:
        return None
    text = _dom.own_text(element)
    if text:
        scale = min(FONT_SCALE_MAX, max(FONT_SCALE_MIN, _font_px(element) / BODY_FONT_PX))
        return Block(index, "text", text, box, len(text) * scale, _face(element))
    tag = str(element.get("tag") or "")
    if tag not in REPLACED and str(element.get("role") or "") not in IMAGE_ROLES:
        return None
    w, h = box[2], box[3]
    weight = min(REPLACED_CAP, max(1.0, math.sqrt(w * h) / REPLACED_PX))
    kind = tag if tag in REPLACED else "img"
    return Block(index, kind, _dom.normalise(str(element.get("name") or "")), box, weight)


def _face(element: Element) -> str:
    """The first family of the element's computed ``font-family``, unquoted, case-folded."""
    font = element.get("font")
    family = str(font.get("family") or "") if isinstance(font, dict) else ""
    return family.split(",")[0].strip().strip("\"'").casefold()


def _font_px(element: Element) -> float:
    font = element.get("font")
    size = font.get("size") if isinstance(font, dict) else None
    match = _PX.match(str(size or ""))
    return float(match.group(1)) if match else BODY_FONT_PX


def _clip(box: _dom.Box, width: int, height: int) -> _dom.Box | None:
    x0, y0 = max(0, box[0]), max(0, box[1])
    x1, y1 = min(width, box[0] + box[2]), min(height, box[1] + box[3])
    if x1 <= x0 or y1 <= y0:
        return None
    return x0, y0, x1 - x0, y1 - y0


def _flat(image: np.ndarray, box: _dom.Box) -> bool:
    """Whether the pixels inside ``box`` (inset, sub-sampled) span at most FLAT_RANGE luma."""
    x, y, w, h = box
    inset = 1 if min(w, h) >= 4 else 0
    x0, y0, x1, y1 = x + inset, y + inset, x + w - inset, y + h - inset
    step = max(1, math.ceil(math.sqrt((x1 - x0) * (y1 - y0) / SAMPLE_PIXELS)))
    crop = image[y0:y1:step, x0:x1:step, :3]
    luma = crop @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    return float(luma.max() - luma.min()) <= FLAT_RANGE
