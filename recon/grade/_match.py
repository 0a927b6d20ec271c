"""Matching a Candidate's content blocks to the reference's (Design2Code's block match, by DOM).

Three passes, each one-to-one and deterministic; a block matched in one pass is not
offered to the next:

1. **exact**: text blocks with the same normalised text, paired in document order (the
   i-th "Read more" of the reference with the i-th of the Candidate); replaced blocks
   with the same tag and accessible name, likewise.
2. **fuzzy**: each remaining reference text block is compared with the remaining
   Candidate text blocks that share a word with it (a word found in more than
   :data:`MAX_POSTINGS` of them does not count; at most :data:`MAX_FUZZY` of them, most
   shared words first) by ``difflib`` character ratio; every pair at or above
   :data:`MATCH_MIN` is a proposal, and proposals are taken greedily, best ratio first
   (ties: reference then Candidate document order). At most :data:`MAX_COMPARISONS`
   ratios are computed per page pair, so a page of thousands of unrelated texts stays
   cheap; past that, blocks stay unmatched.
3. **kind**: remaining replaced blocks of the same tag, in document order (an image with
   another alt text is still the image in that place, at similarity :data:`KIND_SIMILARITY`).

A pair's ``similarity`` is 1 for exact matches, the ratio for fuzzy ones.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from recon.grade._blocks import Block

MATCH_MIN = 0.5
MAX_FUZZY = 8
MAX_COMPARISONS = 2000
MAX_POSTINGS = 64
"""A word shared by more Candidate blocks than this ("the", "and") proposes no pair."""
KIND_SIMILARITY = 0.5
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Pair:
    ref: int  # index into the reference's shown blocks
    cand: int  # index into the Candidate's shown blocks
    similarity: float


def match(ref: Sequence[Block], cand: Sequence[Block]) -> list[Pair]:
    """One-to-one pairs of reference and Candidate blocks, sorted by reference index."""
    pairs = _exact(ref, cand)
    taken_r, taken_c = {p.ref for p in pairs}, {p.cand for p in pairs}
    free_r = [i for i in range(len(ref)) if i not in taken_r]
    free_c = [j for j in range(len(cand)) if j not in taken_c]
    fuzzy = _fuzzy(ref, cand, [i for i in free_r if ref[i].kind == "text"], free_c)
    pairs += fuzzy
    taken_r |= {p.ref for p in fuzzy}
    taken_c |= {p.cand for p in fuzzy}
    pairs += _by_kind(
        ref, cand, [i for i in free_r if i not in taken_r], [j for j in free_c if j not in taken_c]
    )
    return sorted(pairs, key=lambda p: p.ref)


def _exact(ref: Sequence[Block], cand: Sequence[Block]) -> list[Pair]:
    waiting: dict[tuple[str, str], list[int]] = defaultdict(list)
    for j, block in enumerate(cand):
        waiting[(block.kind, block.text)].append(j)
    for queue in waiting.values():
        queue.reverse()  # pop() from the end takes document order
    pairs = []
    for i, block in enumerate(ref):
        if block.kind != "text" and not block.text:
            continue  # an unnamed image: matched by kind, not as an exact name
        same = waiting.get((block.kind, block.text))
        if same:
            pairs.append(Pair(i, same.pop(), 1.0))
    return pairs


def _fuzzy(
    ref: Sequence[Block], cand: Sequence[Block], free_r: list[int], free_c: list[int]
) -> list[Pair]:
    by_word: dict[str, list[int]] = defaultdict(list)
    for j in free_c:
        if cand[j].kind == "text":
            for word in sorted(set(_WORD.findall(cand[j].text))):
                by_word[word].append(j)
    proposals: list[tuple[float, int, int]] = []
    budget = MAX_COMPARISONS
    for i in free_r:
        if budget <= 0:
            break
        shared = Counter(
            j
            for word in sorted(set(_WORD.findall(ref[i].text)))
            if len(by_word.get(word, ())) <= MAX_POSTINGS
            for j in by_word.get(word, ())
        )
        for j in sorted(shared, key=lambda j: (-shared[j], j))[: min(MAX_FUZZY, budget)]:
            budget -= 1
            ratio = _ratio(ref[i].text, cand[j].text)
            if ratio >= MATCH_MIN:
                proposals.append((-ratio, i, j))
    pairs: list[Pair] = []
    used_r: set[int] = set()
    used_c: set[int] = set()
    for neg, i, j in sorted(proposals):
        if i not in used_r and j not in used_c:
            used_r.add(i)
            used_c.add(j)
            pairs.append(Pair(i, j, -neg))
    return pairs


def _ratio(a: str, b: str) -> float:
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < MATCH_MIN or matcher.quick_ratio() < MATCH_MIN:
        return 0.0
    return matcher.ratio()


def _by_kind(
    ref: Sequence[Block], cand: Sequence[Block], free_r: list[int], free_c: list[int]
) -> list[Pair]:
    waiting: dict[str, list[int]] = defaultdict(list)
    for j in reversed(free_c):
        if cand[j].kind != "text":
            waiting[cand[j].kind].append(j)
    pairs = []
    for i in free_r:
        queue = waiting.get(ref[i].kind) if ref[i].kind != "text" else None
        if queue:
            j = queue.pop()
            pairs.append(Pair(i, j, 1.0 if ref[i].text == cand[j].text else KIND_SIMILARITY))
    return pairs
