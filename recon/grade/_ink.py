"""Text a person can see: the waiver of the evidence-as-imagery check (see ``policy``).

The DOM snapshot records, for each element with own text, how that text reaches the
screen (its ``ink``, :mod:`recon.render.snapshot`). The text is *visible* when all hold:

- the element is painted (not ``visibility: hidden``, no ``opacity: 0`` on the way up);
- its glyphs' alpha, the fill colour's alpha times the effective opacity (the product of
  the element's and its ancestors' ``opacity``), is above zero;
- the glyphs, composited at that alpha over the element's backdrop, have a WCAG 2
  contrast ratio of at least :data:`MIN_CONTRAST` against the backdrop. The backdrop is
  what the capture shows there: its median colour inside the text's box (the glyphs
  cover a minority of their line boxes), so text over a photo, a gradient or a sibling's
  background is judged against that. Without the capture, it is the recorded colour
  chain: the element's and its ancestors' background colours over white;
- its font size is at least :data:`MIN_FONT_PX`, and at least :data:`MIN_AREA_PX` px² of
  its line boxes are left once the page's edges and ``overflow``/``clip``/``clip-path:
  inset()`` of it and its ancestors have cut them (a visually-hidden 1x1 px label is not).

Why 1.5:1: WCAG asks 4.5:1 of body text and 3:1 of large text for *comfortable* reading;
here the question is only whether a reader sees that text is there. Light grey on white
(``#ccc``, 1.6:1) is faint but plainly there; black at 1 % alpha on white (1.02:1), the
reported attack, or text the colour of its background (1:1) is not. 1.5:1 is black at
about 18 % alpha on white. Why 6 px: a glyph under 6 CSS px is a few device pixels tall
at the capture's device scale factor of 1, a smudge, not a letter; 36 px² is one such
glyph's square.

Blind spots: ``filter``, ``mix-blend-mode``, ``text-stroke``, ``text-shadow`` and
non-inset ``clip-path`` shapes are not read; text covered by another element counts as
seen when it contrasts with what covers it; the median of a busy photo is one colour of
it; text whose glyphs fill more than half their line boxes is judged against its own
colour. Snapshots from before ``ink``
existed fall back to the old rule: painted, with a colour that is not fully transparent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from recon.grade import _dom
from recon.grade._dom import Box, Dom, Element

MIN_CONTRAST = 1.5
MIN_FONT_PX = 6.0
MIN_AREA_PX = MIN_FONT_PX * MIN_FONT_PX
WHITE = (255.0, 255.0, 255.0)


def luminance(rgb: Sequence[float]) -> float:
    """WCAG 2 relative luminance of an sRGB colour (channels 0..255)."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in _unit(rgb)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: Sequence[float], b: Sequence[float]) -> float:
    """WCAG 2 contrast ratio of two sRGB colours: 1.0 (the same) to 21.0."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def glyph_alpha(ink: Mapping[str, Any]) -> float:
    """The alpha the glyphs are painted with: fill alpha × effective opacity."""
    fill = _floats(ink.get("fill"), 4, (0.0, 0.0, 0.0, 0.0))
    return max(0.0, min(1.0, fill[3])) * max(0.0, min(1.0, float(ink.get("opacity", 1.0))))


def ink_contrast(ink: Mapping[str, Any], under: Sequence[float] | None = None) -> float:
    """Contrast of the glyphs, composited at :func:`glyph_alpha` over the backdrop
    (``under``, or the recorded one)."""
    fill = _floats(ink.get("fill"), 4, (0.0, 0.0, 0.0, 0.0))
    back = _floats(ink.get("backdrop"), 3, WHITE) if under is None else list(under)
    alpha = glyph_alpha(ink)
    seen = [f * alpha + u * (1.0 - alpha) for f, u in zip(fill[:3], back, strict=True)]
    return contrast(seen, back)


def backdrop(element: Element, render: np.ndarray | None = None) -> list[float]:
    """The colour the element's text is read against: the median of ``render`` inside the
    text's box, or the recorded colour chain without a render (or a box on the page)."""
    ink = element.get("ink")
    recorded = _floats(ink.get("backdrop") if isinstance(ink, Mapping) else None, 3, WHITE)
    if render is None or not isinstance(ink, Mapping):
        return recorded
    x, y, w, h = text_box(element)
    height, width = render.shape[:2]
    x0, y0, x1, y1 = max(0, x), max(0, y), min(width, x + w), min(height, y + h)
    if x1 <= x0 or y1 <= y0:
        return recorded
    pixels = render[y0:y1, x0:x1, :3].reshape(-1, 3)
    return [float(v) for v in np.median(pixels, axis=0)]


def visible(element: Element, render: np.ndarray | None = None) -> bool:
    """Whether the element's own text is text a person can see (the module's rule);
    ``render`` is the capture the snapshot belongs to, if at hand."""
    if not _dom.own_text(element) or not _dom.painted(element):
        return False
    ink = element.get("ink")
    if not isinstance(ink, Mapping):
        return _dom.readable(element)  # a snapshot from before ink
    return (
        glyph_alpha(ink) > 0.0
        and ink_contrast(ink, backdrop(element, render)) >= MIN_CONTRAST
        and float(ink.get("size", 0.0)) >= MIN_FONT_PX
        and float(ink.get("area", 0.0)) >= MIN_AREA_PX
    )


def text_box(element: Element) -> Box:
    """Where the element's text shows (its clipped line boxes), or its box without ink."""
    ink = element.get("ink")
    if isinstance(ink, Mapping) and "box" in ink:
        return _dom.box_of({"box": ink["box"]})
    return _dom.box_of(element)


def visible_texts(dom: Dom, area: Box, render: np.ndarray | None = None) -> int:
    """Elements whose own text is visible and shows inside ``area``."""
    return shown_in(text_boxes(dom, render), area)


def text_boxes(dom: Dom, render: np.ndarray | None = None) -> list[Box]:
    """Where each element with visible own text shows it (document order)."""
    return [text_box(e) for e in dom if visible(e, render)]


def shown_in(boxes: Sequence[Box], area: Box) -> int:
    """How many of the text ``boxes`` show inside ``area``."""
    return sum(1 for box in boxes if _dom.overlap(box, area) > 0)


def _unit(rgb: Sequence[float]) -> list[float]:
    return [max(0.0, min(255.0, float(c))) / 255.0 for c in rgb[:3]]


def _floats(value: Any, n: int, default: Sequence[float]) -> list[float]:
    try:
        out = [float(v) for v in value][:n]
    except (TypeError, ValueError):
        return list(default)
    return out + list(default[len(out) :]) if len(out) < n else out
