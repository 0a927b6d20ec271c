"""Global visual score: does the rendered page match the full reference composition?

A pure function of two full-page screenshots and, for captures, their DOM snapshots
(DESIGN.md §6; the metric card is ``recon/grade/cards/global_visual.md``)::

    appearance = Σ W[path][k] * term[k] / Σ W[path][k]    over the applicable terms k
    score      = clip01(appearance * guard)

The weights ``W`` and the guard's floors are a :class:`~recon.model.grading.VisualWeights`:
``DEFAULT``, fitted on people's judgements of real reconstructions (issue 28: ``recon
calibrate fit --study``, Bradley–Terry, held out by page; the shipped fit is
``releases/calibrations/real-reconstructions.yaml``, which a release names), or the one a
release's calibration gives (the grade cell passes it). Every term is in
``GlobalVisual.terms`` whatever its weight.

- ``layout``, ``palette``, ``extent``, ``shape`` (``_gestalt``): the two pages at a
  glance, each as the top of it, 400 px wide: where the ink sits across the page
  (columns, side panels, a centred page against a left-aligned dump), which colours cover
  how much of it, how far it runs, and (image path only) how its ink is arranged in its
  own height.
- ``ssim`` (``_structure``): mean SSIM (``_ssim``) of the aligned pages' 4x4-pooled
  luma, over tiles weighted by the information they hold.
- ``colour`` (``_colour``): chroma-weighted CIEDE2000 between matching tiles.

With both DOM snapshots (the **content path**):

- ``content`` (``_content``): the weighted Jaccard index of the two pages' shown content
  blocks (``_blocks``: text and replaced elements whose pixels are not flat), paired by
  ``_match``; reported, and not a factor of the score (people weigh layout and colour
  over the amount of text: issue 28).
- ``position``: how close paired blocks sit, relative to each page's size.
- ``typeface`` (``_content``): whether the Candidate's text is styled as the reference's
  is: the share of each page's text in the browser's default face, compared.
- ``guard = min(1, coverage / coverage_floor) * min(1, span / span_floor) * min(1,
  ink_ratio / ink_floor)``: a Candidate with little of the reference's content
  (``coverage``), whose content stops early down the reference (``span``: the share of
  its content bands reached, ``_content``), or with little of its ink in the view
  (``ink_ratio``) is scaled down in proportion, to 0 for a blank page. The floors are
  fitted with the weights: people choose a shorter page that keeps the reference's whole
  arrangement over a fuller one that looks wrong (issue 28), so a page cut after its first
  screen is caught by its span more than by its coverage.
- The Candidate's rows are aligned to the reference's by content (``_content.row_map``)
  before the pixel terms, so the right content at another height is compared with its
  own reference rows.

Without them (the **image path**: workflow checkpoint screenshots, which have no DOM),
the pages are top-aligned and white-padded, ``position`` and ``typeface`` are not
applicable, ``shape`` weighs in (the arrangement the DOM gives the content path) and
``guard = min(1, ink_ratio / ink_floor)``: a blank or near-blank page scores near 0. A
reference whose DOM holds no content block (a canvas page) is scored the same way.

Pages are read in row bands; extra memory is a few bands plus per-tile colour means (48
bytes per 16 x 16 pixels), the row map (8 bytes per row) and the two views, whatever the
height. Every intermediate number is returned in ``GlobalVisual.terms``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from recon.errors import HarnessError
from recon.grade._aligned import LUMA_MILLI, WHITE, Aligned
from recon.grade._blocks import blocks
from recon.grade._colour import colour
from recon.grade._content import Sizes, content_terms, identity_map, row_map
from recon.grade._dom import Dom
from recon.grade._gestalt import gestalt
from recon.grade._match import match
from recon.grade._ssim import MAX_WIDTH
from recon.grade._structure import structure
from recon.model.grading import VisualWeights

__all__ = [
    "BLANK_GUARD",
    "BLANK_LUMA_STD",
    "COVERAGE_FLOOR",
    "DEFAULT",
    "INK_FLOOR",
    "LUMA_MILLI",
    "SPAN_FLOOR",
    "VERSION",
    "WEIGHTS",
    "WHITE",
    "W_COLOUR",
    "W_SSIM",
    "GlobalVisual",
    "compose",
    "score",
]

VERSION = "global-visual/6"

WEIGHTS = {
    "content": {
        "ssim": 0.152073, "colour": 0.087595, "position": 0.024095, "layout": 0.219955,
        "palette": 0.183996, "extent": 0.063506, "typeface": 0.26878,
    },
    "image": {
        "ssim": 0.007397, "colour": 0.065513, "layout": 0.287329,
        "palette": 0.28006, "extent": 0.184445, "shape": 0.175256,
    },
}  # fmt: skip
"""Weights of the appearance terms on each path, fitted on the study of issue 28 (the
metric card gives the fit); a term that is not applicable drops out."""
COVERAGE_FLOOR = 0.4
SPAN_FLOOR = 0.5
INK_FLOOR = 0.4
"""Below these shares of the reference's content, content bands or ink the score falls in
proportion; fitted with the weights (the metric card gives the grid)."""
DEFAULT = VisualWeights(
    content=WEIGHTS["content"],
    image=WEIGHTS["image"],
    coverage_floor=COVERAGE_FLOOR,
    span_floor=SPAN_FLOOR,
    ink_floor=INK_FLOOR,
)
"""The metric's own fit; ``releases/calibrations/real-reconstructions.yaml`` records it (a
test keeps the two the same)."""
BLANK_GUARD = 0.05
"""Regional visual's guard on a flat crop (``recon.grade.regional``)."""

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
    weights: VisualWeights | None = None,
) -> GlobalVisual:
    """Score a Candidate full-page screenshot against the reference (HxWx3 or HxWx4 uint8).

    Give both DOM snapshots for the content path; without them it is the image path.
    ``weights``: a calibration's fit (None: ``DEFAULT``).
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
    terms |= gestalt(cand, ref)
    return compose(terms, weights or DEFAULT)


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


def compose(found: Mapping[str, float], fit: VisualWeights) -> GlobalVisual:
    """The score of one page's terms (``GlobalVisual.terms``: the measured ones suffice)
    under ``fit``: the weighted mean of the applicable appearance terms, times the guard.
    Pure arithmetic, so a fit is judged on stored terms without rendering again."""
    terms = dict(found)
    has_content = terms["content_applicable"] == 1.0
    weights = fit.path("content" if has_content else "image")
    applicable = {
        "colour": terms["colour_applicable"] == 1.0,
        "position": terms.get("position_applicable", 0.0) == 1.0,
        "typeface": terms.get("typeface_applicable", 0.0) == 1.0,
        "layout": terms["layout_applicable"] == 1.0,
        "extent": terms["extent_applicable"] == 1.0,
        "shape": terms.get("shape_applicable", 0.0) == 1.0,
    }
    used = {k: w for k, w in weights.items() if applicable.get(k, True)}
    for k in ("ssim", "colour", "position", "layout", "palette", "extent", "typeface", "shape"):
        terms[f"w_{k}"] = used.get(k, 0.0)
    total = sum(used.values())  # 0: a fit that weighs only terms this page lacks
    appearance = sum(w * terms[k] for k, w in used.items()) / total if total > 0 else 0.0
    terms["appearance"] = appearance
    terms["ink_guard"] = min(1.0, terms["ink_ratio"] / fit.ink_floor)
    coverage = terms["coverage"] if has_content else 1.0
    terms["coverage_guard"] = min(1.0, coverage / fit.coverage_floor)
    terms["span_guard"] = min(1.0, (terms["span"] if has_content else 1.0) / fit.span_floor)
    terms["guard"] = terms["ink_guard"] * terms["coverage_guard"] * terms["span_guard"]
    terms["raw"] = appearance * terms["guard"]
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
