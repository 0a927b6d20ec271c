"""Reading a capture's DOM snapshot: boxes, own text, visibility, imagery, text similarity.

A snapshot (``recon.render.capture``) is a list of dicts, one per element with a
non-empty box, in document order: ``{tag, role, name, text, box: [x, y, w, h], color,
background, font, painted, image}``; ``text`` is the element's own text (direct text
nodes), whitespace-collapsed; ``painted`` is false when the element or an ancestor is
``visibility: hidden`` or ``opacity: 0`` (nothing of it reaches the screen); ``image``
is true when the element's (or its ``::before``/``::after``'s) background or content
loads a ``url()``. Snapshots taken before those two fields existed read as painted and
imageless. ``paints`` (every image the element paints) and ``ink`` (how its own text
reaches the screen) are read by the policy metric (``_paints``, ``_ink``).
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

Element = Mapping[str, Any]
Dom = Sequence[Element]
Box = tuple[int, int, int, int]
"""x, y, width, height in page pixels."""

IMAGE_TAGS = frozenset({"img", "picture", "canvas", "svg", "video", "object", "embed", "iframe"})
"""Elements that paint pixels no text or CSS box describes."""
CANVAS_TAGS = frozenset({"html", "body"})
"""Their background paints the whole canvas, whatever their box."""
TEXT_LIMIT = 2000
"""Tokens compared per region text: difflib is quadratic, and a region rarely needs more."""
_TOKEN = re.compile(r"\w+|[^\w\s]")


def box_of(element: Element) -> Box:
    x, y, w, h = (int(v) for v in element.get("box", (0, 0, 0, 0)))
    return x, y, w, h


def normalise(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: what a reader would call the same text."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def own_text(element: Element) -> str:
    return normalise(str(element.get("text") or ""))


def painted(element: Element) -> bool:
    """Reaches the screen: not ``visibility: hidden`` or ``opacity: 0``, itself or by an
    ancestor."""
    return bool(element.get("painted", True))


def readable(element: Element) -> bool:
    """A painted element whose own text has a non-transparent colour."""
    return painted(element) and not transparent(str(element.get("color") or ""))


def shows_image(element: Element) -> bool:
    """A painted element showing an image: an image-like tag, or a ``url()`` background."""
    return painted(element) and (element.get("tag") in IMAGE_TAGS or bool(element.get("image")))


def cover(boxes: Iterable[Box], area: Box, cell: int) -> np.ndarray:
    """Which ``cell``-px cells of ``area`` the boxes touch (a boolean grid)."""
    x0, y0, w, h = area
    mask = np.zeros((-(-h // cell), -(-w // cell)), dtype=bool)
    for x, y, bw, bh in boxes:
        if overlap((x, y, bw, bh), area) == 0:
            continue
        top, left = max(0, y - y0) // cell, max(0, x - x0) // cell
        bottom, right = -(-min(h, y + bh - y0) // cell), -(-min(w, x + bw - x0) // cell)
        mask[top:bottom, left:right] = True
    return mask


def images(dom: Dom) -> list[tuple[bool, Box]]:
    """The painted elements showing an image, as (paints the whole canvas, box)."""
    return [(e.get("tag") in CANVAS_TAGS, box_of(e)) for e in dom if shows_image(e)]


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two boxes (0 when either is empty)."""
    inter = overlap(a, b)
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def centre_inside(element: Element, box: Box) -> bool:
    x, y, w, h = box_of(element)
    cx, cy = x + w / 2, y + h / 2
    return box[0] <= cx < box[0] + box[2] and box[1] <= cy < box[1] + box[3]


def text_in(dom: Dom, box: Box) -> str:
    """Own text of the readable elements centred inside ``box``, in document order,
    space-joined."""
    parts = [own_text(e) for e in dom if readable(e) and centre_inside(e, box)]
    return " ".join(p for p in parts if p)


def similarity(a: str, b: str) -> float:
    """difflib ratio of two short normalised texts, by character (1.0 when equal)."""
    if a == b:
        return 1.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def token_similarity(a: str, b: str) -> float:
    """difflib ratio of two normalised texts as word and punctuation tokens (first TEXT_LIMIT)."""
    if a == b:
        return 1.0
    ta, tb = _TOKEN.findall(a)[:TEXT_LIMIT], _TOKEN.findall(b)[:TEXT_LIMIT]
    return difflib.SequenceMatcher(None, ta, tb, autojunk=False).ratio()


def overlap(a: Box, b: Box) -> int:
    """Area of the intersection of two boxes."""
    w = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
    h = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    return max(0, w) * max(0, h)


def page_extent(dom: Dom) -> tuple[int, int]:
    """Right-most and bottom-most edge of any element (0, 0 for an empty snapshot)."""
    right = bottom = 0
    for element in dom:
        x, y, w, h = box_of(element)
        right, bottom = max(right, x + w), max(bottom, y + h)
    return right, bottom


def transparent(colour: str) -> bool:
    """True for CSS computed colours with zero alpha (``transparent``, ``rgba(..., 0)``)."""
    colour = colour.replace(" ", "").lower()
    return colour == "transparent" or (colour.startswith("rgba(") and colour.endswith(",0)"))
