"""Content terms of global visual, and the row map that aligns a Candidate by its content.

Given both pages' shown blocks (``_blocks``) and their pairs (``_match``), with ``w_r`` a
reference block's weight and ``w_c`` a Candidate block's::

    coverage = Σ_pairs w_r / Σ_ref w_r            share of the reference's content shown
    added    = Σ_unpaired w_c / Σ_cand w_c         share of the Candidate's content not in it
    content  = Σ_pairs w_r * similarity / (Σ_ref w_r + Σ_unpaired w_c)
    order    = Σ_{pairs in sequence} w_r / Σ_pairs w_r
    position = 1 - Σ_pairs w_r * miss / Σ_pairs w_r
    miss     = 1 for a pair out of sequence, else min(1, d / POSITION_SCALE)
    span     = bands holding a paired reference block / bands holding a reference block
    typeface = 1 - |unstyled_cand - unstyled_ref|
    unstyled = Σ_text w in the browser's default face / Σ_text w      (each page's own)

``typeface`` asks whether the Candidate styled its text as the reference did: the share of
each page's shown text (by weight) set in the browser's default face (``DEFAULT_FACES``:
the computed ``font-family`` of text nobody styled is Chromium's "Times New Roman"; a page
that asks for ``serif`` gets the same face). People judging real reconstructions rank an
unstyled HTML dump below a styled page (issue 28); a reference set in the default face
(a bare page) makes the default face right. Not applicable when either page shows no
text block.

``span`` asks how far down the reference the Candidate's content reaches: the reference's
content (its first block's top to its last block's bottom) is cut into ``SPAN_BANDS``
equal bands, each reference block belongs to the band of its centre, and a band counts
when one of its blocks is paired. A page that keeps the reference's whole arrangement
with fewer items (a shorter list, one card of three) spans it; a page that stops after
its first screen does not. People judging real reconstructions choose the first kind
over fuller pages that look wrong (issue 28), so the guard reads ``span``, not only
``coverage``.

``content`` is a weighted Jaccard index: content the Candidate lacks and content it adds
both cost their share. ``d`` is how far a pair's centres lie apart, as a share of the
page: ``max(|Δx| / reference width, |Δ(y / own page height)|)``; each page's ``y`` is
relative to its own height, so a page that is taller or shorter throughout is not
misplaced, while content moved to another part of the page is.

The pairs *in sequence* are the heaviest set of pairs whose Candidate blocks come in the
reference's reading (document) order: the maximum-weight increasing subsequence of the
Candidate's block indices, the pairs taken in the reference's order (a weighted longest
increasing subsequence). A pair outside it is content read out of turn, however close to
its place it ends up: reversing the sections of one long article moves each block by
less than its page-relative distance says (the row map then compares each with itself),
but leaves only one section in sequence.

The **row map** tells which Candidate row to compare with each reference row: every
pair moves the reference rows of its block by ``Candidate top - reference top``
(larger blocks first, so a nested smaller block's move wins); a row outside every paired
block takes the move of the nearest paired row above it (rows above the first block:
that block's move); no pairs, no move. Candidate rows below the lowest row the map
reaches are appended, compared with white. So the right content at another height is
compared with its own reference rows, and a section moved elsewhere is found where it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from recon.grade._blocks import Block, total
from recon.grade._match import Pair

POSITION_SCALE = 0.5
"""A pair half a page apart (or more) is as misplaced as it can be."""
SPAN_BANDS = 10
"""Bands of the reference's content height that ``span`` counts."""
DEFAULT_FACES = frozenset({"times new roman", "times", "serif"})
"""The browser's default face, as a text block's first computed family names it."""


@dataclass(frozen=True)
class Sizes:
    """Page sizes in pixels: the reference's width and both pages' heights."""

    width: int
    ref_height: int
    cand_height: int


def content_terms(
    ref: Sequence[Block], cand: Sequence[Block], pairs: Sequence[Pair], sizes: Sizes
) -> dict[str, float]:
    """coverage, added, text, content and position (module docstring)."""
    ref_total, cand_total = total(ref), total(cand)
    paired_c = {p.cand for p in pairs}
    matched = math.fsum(ref[p.ref].weight for p in pairs)
    similar = math.fsum(ref[p.ref].weight * p.similarity for p in pairs)
    added = math.fsum(b.weight for j, b in enumerate(cand) if j not in paired_c)
    union = ref_total + added
    terms = {
        "reference_weight": ref_total,
        "candidate_weight": cand_total,
        "matched_weight": matched,
        "added_weight": added,
        "pairs": float(len(pairs)),
        "coverage": matched / ref_total if ref_total > 0 else 0.0,
        "added": added / cand_total if cand_total > 0 else 0.0,
        "text": similar / matched if matched > 0 else 0.0,
        "content": similar / union if union > 0 else 0.0,
    }
    terms["span"] = span(ref, {p.ref for p in pairs})
    terms |= _position(ref, cand, pairs, sizes, matched)
    terms |= _typeface(ref, cand)
    return terms


def span(ref: Sequence[Block], paired: set[int]) -> float:
    """The share of the reference's content bands that hold a paired block (module
    docstring); 0 without a reference block."""
    if not ref:
        return 0.0
    top = min(b.box[1] for b in ref)
    height = max(b.box[1] + b.box[3] for b in ref) - top
    band = [
        min(SPAN_BANDS - 1, int(SPAN_BANDS * (b.box[1] + b.box[3] / 2 - top) / height))
        if height > 0 else 0
        for b in ref
    ]  # fmt: skip
    held = set(band)
    reached = {band[i] for i in paired}
    return len(reached & held) / len(held)


def unstyled(found: Sequence[Block]) -> float | None:
    """The share of a page's shown text, by weight, in the browser's default face (None:
    no text block)."""
    text = [b for b in found if b.kind == "text"]
    weight = math.fsum(b.weight for b in text)
    if weight <= 0:
        return None
    return math.fsum(b.weight for b in text if b.face in DEFAULT_FACES) / weight


def _typeface(ref: Sequence[Block], cand: Sequence[Block]) -> dict[str, float]:
    r, c = unstyled(ref), unstyled(cand)
    if r is None or c is None:
        return {"typeface": 0.0, "typeface_applicable": 0.0}
    return {
        "typeface": 1.0 - abs(c - r),
        "typeface_applicable": 1.0,
        "unstyled_reference": r,
        "unstyled_candidate": c,
    }


def _position(
    ref: Sequence[Block], cand: Sequence[Block], pairs: Sequence[Pair], sizes: Sizes, matched: float
) -> dict[str, float]:
    if matched <= 0:
        return {"position": 0.0, "misplacement": 0.0, "order": 0.0, "position_applicable": 0.0}
    weights = [ref[p.ref].weight for p in pairs]
    kept = in_sequence([p.cand for p in pairs], weights)
    lost = 0.0
    for p, w, ok in zip(pairs, weights, kept, strict=True):
        d = _distance(ref[p.ref].box, cand[p.cand].box, sizes)
        lost += w * (min(1.0, d / POSITION_SCALE) if ok else 1.0)
    misplacement = lost / matched
    return {
        "position": 1.0 - misplacement,
        "misplacement": misplacement,
        "order": math.fsum(w for w, ok in zip(weights, kept, strict=True) if ok) / matched,
        "position_applicable": 1.0,
    }


def in_sequence(keys: Sequence[int], weights: Sequence[float]) -> list[bool]:
    """Which items lie on the maximum-weight strictly increasing subsequence of ``keys``
    (ties: the earliest-ending, then leftmost chain). O(n log n): a Fenwick tree of the best
    chain weight ending at each key rank."""
    n = len(keys)
    rank = {k: r + 1 for r, k in enumerate(sorted(set(keys)))}
    best = [0.0] * (len(rank) + 1)  # Fenwick tree: max chain weight over ranks <= r
    end = [-1] * (len(rank) + 1)  # the item that chain ends with
    chain, back = [0.0] * n, [-1] * n
    for i, key in enumerate(keys):
        r = rank[key] - 1
        top, prev = 0.0, -1
        while r > 0:
            if best[r] > top:
                top, prev = best[r], end[r]
            r -= r & -r
        chain[i], back[i] = top + weights[i], prev
        r = rank[key]
        while r < len(best):
            if chain[i] > best[r]:
                best[r], end[r] = chain[i], i
            r += r & -r
    kept = [False] * n
    i = max(range(n), key=lambda j: (chain[j], -j)) if n else -1
    while i >= 0:
        kept[i] = True
        i = back[i]
    return kept


def _distance(a: tuple[int, int, int, int], b: tuple[int, int, int, int], sizes: Sizes) -> float:
    dx = abs((b[0] + b[2] / 2) - (a[0] + a[2] / 2)) / sizes.width
    dy = abs((b[1] + b[3] / 2) / sizes.cand_height - (a[1] + a[3] / 2) / sizes.ref_height)
    return max(dx, dy)


def row_map(
    ref: Sequence[Block], cand: Sequence[Block], pairs: Sequence[Pair], sizes: Sizes
) -> np.ndarray:
    """The Candidate row compared with each aligned row (module docstring); -1 is white."""
    height = sizes.ref_height
    move = np.zeros(height, dtype=np.int64)
    painted = np.zeros(height, dtype=bool)
    for p in sorted(pairs, key=lambda p: (-ref[p.ref].area, p.ref)):
        rb, cb = ref[p.ref].box, cand[p.cand].box
        move[rb[1] : rb[1] + rb[3]] = cb[1] - rb[1]
        painted[rb[1] : rb[1] + rb[3]] = True
    if painted.any():
        rows = np.arange(height)
        source = np.maximum.accumulate(np.where(painted, rows, -1))
        source[source < 0] = int(np.argmax(painted))  # above the first block: its move
        move = move[source]
    mapped = np.arange(height, dtype=np.int64) + move
    mapped[(mapped < 0) | (mapped >= sizes.cand_height)] = -1
    lowest = int(mapped.max())
    tail = np.arange(lowest + 1, sizes.cand_height, dtype=np.int64)
    return np.concatenate([mapped, tail])


def identity_map(sizes: Sizes) -> np.ndarray:
    """Top-aligned rows, the shorter page white-padded below: the map without content."""
    rows = np.arange(max(sizes.ref_height, sizes.cand_height), dtype=np.int64)
    rows[rows >= sizes.cand_height] = -1
    return rows
