"""Reading a capture's DOM snapshot: boxes, own text, and text similarity.

A snapshot (``recon.render.capture``) is a list of dicts, one per visible element in
document order: ``{tag, role, name, text, box: [x, y, w, h], color, background, font}``;
``text`` is the element's own text (direct text nodes), whitespace-collapsed.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

Element = Mapping[str, Any]
Dom = Sequence[Element]
Box = tuple[int, int, int, int]
"""x, y, width, height in page pixels."""

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


def centre_inside(element: Element, box: Box) -> bool:
    x, y, w, h = box_of(element)
    cx, cy = x + w / 2, y + h / 2
    return box[0] <= cx < box[0] + box[2] and box[1] <= cy < box[1] + box[3]


def text_in(dom: Dom, box: Box) -> str:
    """Own text of the elements centred inside ``box``, in document order, space-joined."""
    parts = [own_text(e) for e in dom if centre_inside(e, box)]
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
