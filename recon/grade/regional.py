"""Regional visual score: do declared high-value regions keep local structure and detail?

Each region is a box in reference pixels (given, or the box of the element its selector
resolves to in the reference DOM; see :func:`resolve_regions`). A region's score comes
from what the candidate's DOM renders there: its readable text, where that text sits,
and pixels only as far as the candidate's elements paint them with text and CSS rather
than with an image the reference does not have there. Per region::

    pixels    = (W_SSIM * ssim + W_COLOUR * colour) * blank_guard
    structure = pixels * (1 - foreign_imagery)
    text      = min(1, ratio / thresholds.text_similarity)
    position  = Σ len(anchor) * placed(anchor) / Σ len(anchor)
    combined  = (W_STRUCTURE*structure + W_TEXT*text + W_POSITION*position) / Σ applicable W

- ``ssim``: mean SSIM (``_ssim``, Rec. 601 luma) of the candidate's crop at the
  reference box against the reference crop, clipped to [0, 1]. Crops never resize: a
  box reaching past either page reads white there. ``colour`` is 1 minus the
  area-weighted mean |Δ mean RGB| / 255 of ``CELL``-px cells. ``blank_guard`` is
  ``BLANK_GUARD`` when the candidate crop is flat (luma std < ``BLANK_LUMA_STD``) and
  the reference crop is not.
- ``foreign_imagery``: the share of the box's ``IMAGERY_CELL``-px cells touched by an
  image of the candidate that the reference does not have there. An image is a painted
  element with an image-like tag (``img``, ``svg``, ``canvas``...) or a ``url()``
  background or content (of itself or its ``::before``/``::after``); an ``html`` or
  ``body`` one paints the whole page. The reference has it there when one of its images
  overlaps it by at least ``IMAGE_MATCH_IOU`` (intersection over union; a page-wide
  image matches only a page-wide one). A screenshot pasted as a background or an
  ``<img>`` thus earns no pixel credit, however alike the pixels, even over the small
  icons the reference paints with images of its own.
- ``ratio``: difflib ratio, over word and punctuation tokens, of the normalised own
  text of the readable elements centred inside the box, in each DOM (never OCR).
  Readable: painted (not ``visibility: hidden`` or ``opacity: 0``, itself or by an
  ancestor) with a non-transparent colour; hidden text reads as no text.
- Anchors are the (at most ``MAX_ANCHORS`` longest) readable reference text elements
  inside the box. Each is matched to the candidate element with the same normalised text (the
  nearest if several), else the one whose text is most similar by character ratio (at
  least ``text_similarity``; among the ``MAX_FUZZY`` nearest within
  ``SEARCH_HALF_LIVES`` half-lives beyond the tolerance; ties go to the nearest), among
  the candidate's readable elements.
  ``placed`` is 1 within ``position_tolerance_px`` of the reference top-left corner,
  halving every ``POSITION_HALF_LIFE_PX`` beyond it, and 0 when nothing matches.
- A region whose reference box holds no text scores on structure alone (text and
  position are not applicable and recorded as such).

The score is the region-weight-weighted mean of ``combined``; no regions score 1.
Blind spots: images painted outside their element's box (a positioned pseudo-element),
``border-image``, ``mask-image`` and ``list-style-image`` are not seen as images; text
drawn in a canvas or an SVG is not text.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from recon.errors import ConfigError, HarnessError
from recon.grade import _dom
from recon.grade._dom import Box, Dom
from recon.grade._ssim import mean_ssim_rows
from recon.grade.global_visual import (
    BLANK_GUARD,
    BLANK_LUMA_STD,
    LUMA_MILLI,
    W_COLOUR,
    W_SSIM,
    WHITE,
)
from recon.grade.result import MetricResult
from recon.grade.selectors import Resolution, resolve_regions
from recon.model.grading import Region, Thresholds

__all__ = ["Regional", "Resolution", "Still", "resolve_regions", "score"]

VERSION = "regional-visual/2"
W_STRUCTURE, W_TEXT, W_POSITION = 0.5, 0.25, 0.25
CELL = 16
POSITION_HALF_LIFE_PX = 64.0
MAX_ANCHORS = 20
MAX_FUZZY = 64
SEARCH_HALF_LIVES = 12
"""Fuzzy matches are looked for within this many half-lives beyond the tolerance."""
BAND_ROWS = 256
IMAGERY_CELL = 8
IMAGE_MATCH_IOU = 0.5


@dataclass(frozen=True)
class Still:
    """One viewport's full-page screenshot (HxWx3/4 uint8) and DOM snapshot."""

    image: np.ndarray
    dom: Dom


@dataclass(frozen=True)
class Regional(MetricResult):
    version: str = VERSION


def score(
    regions: Sequence[Region],
    candidate: Mapping[str, Still],
    reference: Mapping[str, Still],
    thresholds: Thresholds,
) -> Regional:
    """Score every region on the candidate's still of the region's viewport."""
    resolution = resolve_regions(regions, {name: s.dom for name, s in reference.items()})
    if resolution.problems:
        raise ConfigError("; ".join(resolution.problems))
    indexes: dict[str, _TextIndex] = {}
    rows: list[dict[str, Any]] = []
    for region in regions:
        view = region.viewport
        _check(candidate.get(view), f"candidate still for viewport {view!r}")
        _check(reference.get(view), f"reference still for viewport {view!r}")
        index = indexes.setdefault(view, _TextIndex(_readable(candidate[view].dom)))
        box = resolution.boxes[region.id]
        rows.append(_region(region, box, candidate[view], reference[view], index, thresholds))
    total_weight = sum(r["weight"] for r in rows)
    weighted = sum(r["weight"] * r["combined"] for r in rows)
    value = weighted / total_weight if total_weight > 0 else 1.0
    terms = {
        "regions": float(len(rows)),
        "weight_sum": float(total_weight),
        "weighted_sum": float(weighted),
        "score": value,
    }
    return Regional(score=value, rows=rows, terms=terms)


def _check(still: Still | None, name: str) -> None:
    if still is None:
        raise HarnessError(f"regional: no {name}")
    img = still.image
    if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] not in (3, 4) or 0 in img.shape:
        raise HarnessError(
            f"regional: {name}: expected a non-empty HxWx3/4 uint8 image, "
            f"got {img.dtype} {img.shape}; decode the screenshot as RGB(A)"
        )


def _region(
    region: Region, box: Box, cand: Still, ref: Still, index: _TextIndex, th: Thresholds
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "id": region.id,
        "viewport": region.viewport,
        "weight": region.weight,
        "box": list(box),
    }
    row |= _structure(cand.image, ref.image, box)
    row["foreign_imagery"] = foreign_imagery(cand.dom, ref.dom, box)
    row["structure"] = row["pixels"] * (1.0 - row["foreign_imagery"])
    ref_text = _dom.text_in(ref.dom, box)
    row["has_text"] = bool(ref_text)
    parts = [(W_STRUCTURE, row["structure"])]
    if ref_text:
        ratio = _dom.token_similarity(_dom.text_in(cand.dom, box), ref_text)
        row["text_ratio"] = ratio
        row["text"] = min(1.0, ratio / th.text_similarity) if th.text_similarity > 0 else 1.0
        row |= _position(ref.dom, box, index, th)
        parts += [(W_TEXT, row["text"]), (W_POSITION, row["position"])]
    row["combined"] = sum(w * v for w, v in parts) / sum(w for w, _ in parts)
    return row


# --- structure: SSIM and colour of the crops -------------------------------------------


def _structure(cand: np.ndarray, ref: np.ndarray, box: Box) -> dict[str, float]:
    _, _, w, h = box
    ssim = mean_ssim_rows(
        lambda r0, r1: (_luma(_crop(cand, box, r0, r1)), _luma(_crop(ref, box, r0, r1))),
        h,
        w,
        scale=1000,
    )
    diff = 0
    moments = [[0, 0], [0, 0]]  # [cand, ref] x [Σ luma, Σ luma²], luma in 1/1000 grey levels
    for r0 in range(0, h, BAND_ROWS):
        r1 = min(h, r0 + BAND_ROWS)
        a, b = _crop(cand, box, r0, r1), _crop(ref, box, r0, r1)
        diff += int(np.abs(_cells(a) - _cells(b)).sum())
        for i, img in enumerate((a, b)):
            y = _luma(img).astype(np.int64)
            moments[i][0] += int(y.sum())
            moments[i][1] += int((y * y).sum())
    colour = 1.0 - diff / (WHITE * 3 * w * h)
    n = w * h
    std = [math.sqrt(n * s2 - s * s) / n / 1000 for s, s2 in moments]
    blank = std[0] < BLANK_LUMA_STD <= std[1]
    guard = BLANK_GUARD if blank else 1.0
    ssim = min(1.0, max(0.0, ssim))
    return {
        "ssim": ssim,
        "colour": colour,
        "candidate_luma_std": std[0],
        "reference_luma_std": std[1],
        "blank_guard": guard,
        "pixels": (W_SSIM * ssim + W_COLOUR * colour) * guard,
    }


def foreign_imagery(cand: Dom, ref: Dom, box: Box) -> float:
    """Share of ``box``'s cells that an image of ``cand`` the reference does not have there
    touches (see the module docstring)."""
    ours = _dom.images(ref)
    foreign = [
        box if canvas else where
        for canvas, where in _dom.images(cand)
        if not any(_same_image(canvas, where, *mine) for mine in ours)
    ]
    return float(_dom.cover(foreign, box, IMAGERY_CELL).mean())


def _same_image(canvas: bool, where: Box, ref_canvas: bool, ref_where: Box) -> bool:
    if canvas or ref_canvas:
        return canvas and ref_canvas
    return _dom.iou(where, ref_where) >= IMAGE_MATCH_IOU


def _readable(dom: Dom) -> list[_dom.Element]:
    return [e for e in dom if _dom.readable(e)]


def _crop(img: np.ndarray, box: Box, r0: int, r1: int) -> np.ndarray:
    """Rows r0:r1 of ``img`` cut at ``box``; outside the page reads white."""
    x, y, w, _ = box
    out = np.full((r1 - r0, w, 3), WHITE, dtype=np.uint8)
    top, bottom = max(y + r0, 0), min(y + r1, img.shape[0])
    left, right = max(x, 0), min(x + w, img.shape[1])
    if top < bottom and left < right:
        out[top - y - r0 : bottom - y - r0, left - x : right - x] = img[top:bottom, left:right, :3]
    return out


def _luma(rgb: np.ndarray) -> np.ndarray:
    r, g, b = LUMA_MILLI
    y = rgb[..., 0].astype(np.int32) * r
    y += rgb[..., 1].astype(np.int32) * g
    y += rgb[..., 2].astype(np.int32) * b
    return y


def _cells(rgb: np.ndarray) -> np.ndarray:
    rows = np.add.reduceat(rgb, np.arange(0, rgb.shape[0], CELL), axis=0, dtype=np.int64)
    return np.add.reduceat(rows, np.arange(0, rgb.shape[1], CELL), axis=1, dtype=np.int64)


# --- position: where the region's text went ---------------------------------------------


class _TextIndex:
    """The candidate's text elements, by exact normalised text and by place."""

    def __init__(self, dom: Dom) -> None:
        items = [(_dom.own_text(e), _dom.box_of(e)) for e in dom]
        self.items = [(t, b) for t, b in items if t]
        self.corners = np.array([b[:2] for _, b in self.items], dtype=np.float64).reshape(-1, 2)
        self.exact: dict[str, list[Box]] = {}
        for text, box in self.items:
            self.exact.setdefault(text, []).append(box)

    def best(self, text: str, near: Box, cutoff: float, radius: float) -> tuple[float, Box] | None:
        """The most similar element (ratio >= cutoff), the nearest on ties.

        An exact text match is found anywhere; a fuzzy one among the MAX_FUZZY elements
        nearest to ``near`` within ``radius`` px (farther, position credit is ~0 anyway).
        """
        if text in self.exact:
            return 1.0, min(self.exact[text], key=lambda b: _offset(b, near))
        offsets = np.hypot(self.corners[:, 0] - near[0], self.corners[:, 1] - near[1])
        order = np.argsort(offsets, kind="stable")[:MAX_FUZZY]
        matcher = difflib.SequenceMatcher(autojunk=False)
        matcher.set_seq2(text)
        found: tuple[float, Box] | None = None
        for i in order[offsets[order] <= radius].tolist():
            other, box = self.items[i]
            matcher.set_seq1(other)
            if matcher.real_quick_ratio() < cutoff or matcher.quick_ratio() < cutoff:
                continue
            ratio = matcher.ratio()
            if ratio >= cutoff and (found is None or ratio > found[0]):
                found = (ratio, box)
        return found


def _position(ref_dom: Dom, box: Box, index: _TextIndex, th: Thresholds) -> dict[str, float]:
    anchors = [
        (_dom.own_text(e), _dom.box_of(e))
        for e in ref_dom
        if _dom.readable(e) and _dom.centre_inside(e, box)
    ]
    anchors = sorted((a for a in anchors if a[0]), key=lambda a: -len(a[0]))[:MAX_ANCHORS]
    credit = weight = offsets = 0.0
    matched = 0
    for text, where in anchors:
        weight += len(text)
        radius = th.position_tolerance_px + SEARCH_HALF_LIVES * POSITION_HALF_LIFE_PX
        best = index.best(text, where, th.text_similarity, radius)
        if best is None:
            continue
        matched += 1
        offset = _offset(best[1], where)
        offsets += offset
        excess = max(0.0, offset - th.position_tolerance_px)
        credit += len(text) * 0.5 ** (excess / POSITION_HALF_LIFE_PX)
    return {
        "anchors": float(len(anchors)),
        "anchors_matched": float(matched),
        "mean_offset_px": offsets / matched if matched else 0.0,
        "position": credit / weight if weight else 0.0,
    }


def _offset(a: Box, b: Box) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])
