"""Where a DOM snapshot paints images, and the images whose bytes the snapshot holds.

Each snapshot element lists the images it paints (``paints``, :mod:`recon.render.snapshot`):
``{via, url}``. Two kinds of *paint site* follow (one per element and kind):

- **replaced**: the pixels in the box are the image's: an image-like element
  (``_dom.IMAGE_TAGS``: ``img``, ``picture``, ``canvas``, ``svg``, ``video``, ``object``,
  ``embed``, ``iframe``) or a paint by ``input`` (``type=image``) or ``svg-image``
  (SVG ``<image>``), whatever its URL;
- **unread background**: a ``background``/``border-image``/``list-style``/``content``
  paint (the element's or its ``::before``/``::after``'s) whose bytes the grader could
  not read: not a served raster, not a decodable ``data:`` raster (a ``blob:`` URL, an
  SVG, a URL the snapshot cut, a missing file). A background whose bytes were read is
  judged by those bytes instead. The box of ``<html>``/``<body>`` is the whole page (their
  background paints the canvas); a pseudo-element's is its element's; a paint inside an
  open shadow tree carries the box of the element that paints it.

``data:`` URLs are decoded here (base64 or percent-encoded), rasters by Pillow (whatever
the declared type says), and an SVG's embedded raster ``data:`` URLs with it
(``<url>#<n>``): an SVG itself is not rasterised.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes

import numpy as np
from PIL import Image

from recon.grade import _dom
from recon.grade._dom import Box, Dom, Element

MAX_DECODED_PIXELS = 40_000_000
"""Images larger than this are not decoded for hashing."""
REPLACED_VIAS = frozenset({"img", "input", "poster", "object", "embed", "svg-image", "canvas"})
"""Paints that replace an element's content (an ``_dom.IMAGE_TAGS`` element is replaced
whatever it paints)."""
BACKGROUND_VIAS = frozenset({"background", "border-image", "list-style", "content"})
_EMBEDDED = re.compile(rb"data:image/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=\s]+", re.IGNORECASE)


@dataclass(frozen=True)
class Site:
    """Where an image is painted: the box, how (``via``), by which element (``tag``)."""

    box: Box
    replaced: bool
    via: str
    tag: str


def paints(element: Element) -> list[Mapping[str, Any]]:
    """The element's paint records (none for a snapshot from before ``paints``)."""
    found = element.get("paints") or ()
    return [p for p in found if isinstance(p, Mapping)]


def short(url: str, keep: int = 64) -> str:
    """A URL as a row shows it (a ``data:`` URL can be megabytes)."""
    return url if len(url) <= keep else url[:keep] + "…"


def data_bytes(url: str) -> bytes | None:
    """The bytes of a ``data:`` URL (base64 or percent-encoded), or None."""
    if not url.startswith("data:") or "," not in url:
        return None
    head, body = url[5:].split(",", 1)
    if head.lower().endswith(";base64"):
        try:  # forgiving base64, as browsers read it: whitespace dropped, padding optional
            text = "".join(unquote_to_bytes(body).decode("ascii").split()).rstrip("=")
            return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
        except (binascii.Error, UnicodeDecodeError, ValueError):
            return None
    return unquote_to_bytes(body)


def decode_raster(body: bytes) -> np.ndarray | None:
    """A raster image's pixels as RGB, or None (not a raster, undecodable, too large)."""
    try:
        with Image.open(io.BytesIO(body)) as img:
            if img.width * img.height > MAX_DECODED_PIXELS:
                return None
            return np.asarray(img.convert("RGB"))
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


def embedded_rasters(text: bytes) -> list[np.ndarray]:
    """The raster images an SVG (or any text) holds as base64 ``data:`` URLs."""
    found = (data_bytes(m.group().decode("ascii")) for m in _EMBEDDED.finditer(text))
    decoded = (decode_raster(body) for body in found if body)
    return [img for img in decoded if img is not None]


def inline_images(doms: Iterable[Dom]) -> dict[str, tuple[dict[str, Any], np.ndarray]]:
    """Every raster a snapshot paints from a ``data:`` URL, by URL (an SVG's embedded
    rasters as ``<url>#<n>``): where it is first painted (``tag``, ``via``, ``box``) and
    its pixels."""
    out: dict[str, tuple[dict[str, Any], np.ndarray]] = {}
    seen: set[str] = set()
    for element, paint in _all_paints(doms):
        url = str(paint.get("url") or "")
        if url in seen or paint.get("truncated") or not url.startswith("data:"):
            continue
        seen.add(url)
        body = data_bytes(url)
        if not body:
            continue
        where = {
            "tag": paint.get("tag") or element.get("tag"),
            "via": paint.get("via"),
            "box": list(_dom.box_of(paint if "box" in paint else element)),
        }
        img = decode_raster(body)
        if img is not None:
            out[url] = (where, img)
            continue
        for n, nested in enumerate(embedded_rasters(body)):
            out[f"{url}#{n}"] = (where, nested)
    return out


def sites(dom: Dom, read: Iterable[str], page: Box) -> list[Site]:
    """The paint sites of ``dom`` (see the module docstring); ``read`` holds the URLs whose
    bytes the grader has (served rasters, decoded ``data:`` rasters); ``page`` is the box
    of the canvas."""
    known = {_unfragment(url) for url in read}
    out: list[Site] = []
    seen: set[tuple[Box, bool]] = set()
    for element in dom:
        for site in _element_sites(element, known, page):
            if (site.box, site.replaced) not in seen:
                seen.add((site.box, site.replaced))
                out.append(site)
    return out


def _element_sites(element: Element, known: set[str], page: Box) -> Iterator[Site]:
    tag = str(element.get("tag") or "")
    box = page if tag in _dom.CANVAS_TAGS else _dom.box_of(element)
    shown = _dom.painted(element)
    if shown and tag in _dom.IMAGE_TAGS:
        yield Site(box, True, tag, tag)
    for paint in paints(element):
        via = str(paint.get("via") or "")
        base = via.split("::", 1)[0]
        url = _unfragment(str(paint.get("url") or ""))
        own = "box" in paint  # a shadow-tree element's paint: its own box, its own check
        if not (shown or own):
            continue
        where = _dom.box_of({"box": paint["box"]}) if own else box
        by = str(paint.get("tag") or tag)
        if base in REPLACED_VIAS:
            yield Site(where, True, via, by)
        elif base in BACKGROUND_VIAS and (paint.get("truncated") or url not in known):
            yield Site(where, False, via, by)


def _unfragment(url: str) -> str:
    """A URL without its ``#fragment`` (the request never carries it); ``data:`` URLs whole."""
    return url if url.startswith("data:") else url.split("#", 1)[0]


def _all_paints(doms: Iterable[Dom]) -> Iterator[tuple[Element, Mapping[str, Any]]]:
    for dom in doms:
        for element in dom:
            for paint in paints(element):
                yield element, paint
