"""Global visual score: does the rendered page match the full reference composition?

A pure function of two full-page screenshots and, for captures, their DOM snapshots
(DESIGN.md §6; the metric card is ``recon/grade/cards/global_visual.md``)::

    appearance = Σ W[k] * term[k] / Σ W[k]      over the applicable k in ssim, colour, position
    score      = clip01(content * appearance * blank_guard)

With both DOM snapshots (the **content path**):

- ``content`` (``_content``): the weighted Jaccard index of the two pages' shown content
  blocks (``_blocks``: text and replaced elements whose pixels are not flat), paired by
  ``_match``; what the Candidate lacks and what it adds both cost their share.
- ``position``: how close paired blocks sit, relative to each page's size.
- ``blank_guard``: ``BLANK_GUARD`` when the Candidate shows less than ``BLANK_COVERAGE``
  of the reference's content (``coverage``), else 1. Decided by content, never by ink:
  a page with most of the reference's text and blocks is never blank, whatever its
  background.
- The Candidate's rows are aligned to the reference's by content (``_content.row_map``)
  before the pixel terms, so the right content at another height is compared with its
  own reference rows.

Without them (the **image path**: workflow checkpoint screenshots, which have no DOM),
the pages are top-aligned and white-padded, ``content`` is 1, ``position`` is not
applicable and there is no guard; the tile weighting of the SSIM term is what keeps a
nearly blank page from scoring. A reference whose DOM holds no content block (a canvas
page) is scored the same way.

- ``ssim`` (``_structure``): mean SSIM (``_ssim``) of the aligned pages' 4x4-pooled
  luma, over tiles weighted by the information they hold.
- ``colour`` (``_colour``): chroma-weighted CIEDE2000 between matching tiles.

Pages are read in row bands; extra memory is a few bands plus per-tile colour means (48
bytes per 16 x 16 pixels) and the row map (8 bytes per row), whatever the height. Every
intermediate number is returned in ``GlobalVisual.terms``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from recon.errors import HarnessError
from recon.grade._aligned import LUMA_MILLI, WHITE, Aligned
from recon.grade._blocks import blocks
from recon.grade._colour import colour
from recon.grade._content import Sizes, content_terms, identity_map, row_map
from recon.grade._dom import Dom
from recon.grade._match import match
from recon.grade._ssim import MAX_WIDTH
from recon.grade._structure import structure

__all__ = [
    "BLANK_GUARD",
    "BLANK_LUMA_STD",
    "LUMA_MILLI",
    "VERSION",
    "WEIGHTS",
    "WHITE",
    "W_COLOUR",
    "W_SSIM",
    "GlobalVisual",
    "score",
]

VERSION = "global-visual/3"

WEIGHTS = {"ssim": 0.4, "colour": 0.3, "position": 0.3}
"""Weights of the appearance terms; a term that is not applicable drops out."""
BLANK_COVERAGE = 0.05
BLANK_GUARD = 0.05

# Regional visual's structure term (recon.grade.regional imports these): global visual
# no longer mixes SSIM and colour with them.
W_SSIM = 0.7
W_COLOUR = 0.3
BLANK_LUMA_STD = 2.0


@dataclass(frozen=True)
class GlobalVisual:
    """The score in [0, 1] and every term of the arithmetic that produced it."""

    score: float
    terms: dict[str, float]
    version: str = VERSION


def score(
    candidate: np.ndarray,
    reference: np.ndarray,
    *,
    candidate_dom: Dom | None = None,
    reference_dom: Dom | None = None,
) -> GlobalVisual:
    """Score a Candidate full-page screenshot against the reference (HxWx3 or HxWx4 uint8).

    Give both DOM snapshots for the content path; without them it is the image path.
    """
    cand = _rgb(candidate, "candidate")
    ref = _rgb(reference, "reference")
    sizes = Sizes(width=ref.shape[1], ref_height=ref.shape[0], cand_height=cand.shape[0])
    terms: dict[str, float] = {
        "candidate_height": cand.shape[0],
        "candidate_width": cand.shape[1],
        "reference_height": ref.shape[0],
        "reference_width": ref.shape[1],
    }
    if candidate_dom is not None and reference_dom is not None:
        content, rows = _content(cand, ref, candidate_dom, reference_dom, sizes)
    else:
        content, rows = {"content_applicable": 0.0}, identity_map(sizes)
    terms |= content
    aligned = Aligned(cand, ref, rows)
    terms["aligned_height"] = aligned.height
    terms |= structure(aligned)
    terms |= colour(aligned)
    return _compose(terms)


def _content(
    cand: np.ndarray, ref: np.ndarray, cand_dom: Dom, ref_dom: Dom, sizes: Sizes
) -> tuple[dict[str, float], np.ndarray]:
    """The content terms and the content row map; the identity map when the reference
    shows no content block (the content path does not apply)."""
    want, got = blocks(ref_dom, ref), blocks(cand_dom, cand)
    terms = {
        "reference_blocks": float(len(want.shown)),
        "reference_hidden": float(want.hidden),
        "candidate_blocks": float(len(got.shown)),
        "candidate_hidden": float(got.hidden),
    }
    if not want.shown:
        return terms | {"content_applicable": 0.0}, identity_map(sizes)
    pairs = match(want.shown, got.shown)
    terms |= content_terms(want.shown, got.shown, pairs, sizes)
    terms["content_applicable"] = 1.0
    return terms, row_map(want.shown, got.shown, pairs, sizes)


def _compose(terms: dict[str, float]) -> GlobalVisual:
    applicable = {
        "ssim": True,
        "colour": terms["colour_applicable"] == 1.0,
        "position": terms.get("position_applicable", 0.0) == 1.0,
    }
    used = {k: w for k, w in WEIGHTS.items() if applicable[k]}
    for k, w in WEIGHTS.items():
        terms[f"w_{k}"] = w if applicable[k] else 0.0
    appearance = sum(w * terms[k] for k, w in used.items()) / sum(used.values())
    has_content = terms["content_applicable"] == 1.0
    blank = has_content and terms["coverage"] < BLANK_COVERAGE
    terms["appearance"] = appearance
    terms["blank"] = float(blank)
    terms["blank_guard"] = BLANK_GUARD if blank else 1.0
    content = terms["content"] if has_content else 1.0
    terms["raw"] = content * appearance * terms["blank_guard"]
    terms["score"] = min(1.0, max(0.0, terms["raw"]))
    return GlobalVisual(score=terms["score"], terms={k: float(v) for k, v in terms.items()})


def _rgb(img: np.ndarray, name: str) -> np.ndarray:
    """The RGB view of an HxWx3 or HxWx4 uint8 screenshot, or a HarnessError naming the fault."""
    if not isinstance(img, np.ndarray) or img.dtype != np.uint8:
        raise HarnessError(f"global_visual: {name}: expected a uint8 numpy array")
    if img.ndim != 3 or img.shape[2] not in (3, 4) or img.shape[0] < 1 or img.shape[1] < 1:
        raise HarnessError(
            f"global_visual: {name}: expected shape HxWx3 or HxWx4 with H, W >= 1, "
            f"got {img.shape}; decode the screenshot as RGB(A) before scoring"
        )
    if img.shape[1] > MAX_WIDTH:
        raise HarnessError(
            f"global_visual: {name}: {img.shape[1]} px wide, over the {MAX_WIDTH} px limit "
            "that keeps the SSIM sums exact; capture at a page width below it"
        )
    return img[..., :3]
