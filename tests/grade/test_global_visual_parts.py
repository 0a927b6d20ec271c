"""The parts of global visual: content blocks, matching, the row map, colour and SSIM tiles."""

from __future__ import annotations

import numpy as np
import pytest

from recon.grade import _blocks, _colour, _match
from recon.grade._aligned import Aligned
from recon.grade._blocks import Block, blocks
from recon.grade._content import Sizes, content_terms, identity_map, in_sequence, row_map
from recon.grade._structure import structure
from tests.grade.synthetic import draw, el, landing


def block(index: int, text: str, y: int, *, kind: str = "text", h: int = 20) -> Block:
    return Block(index, kind, text, (10, y, 200, h), float(len(text) or 5))


def test_blocks_are_text_and_replaced_elements_shown_in_pixels() -> None:
    dom = landing()
    image = draw(dom)
    found = blocks(dom, image)
    texts = {b.text for b in found.shown}
    assert "acme widgets" in texts and "get started" in texts
    assert all(b.kind == "text" for b in found.shown)  # the synthetic page has no images
    assert found.hidden == 0
    covered = image.copy()
    covered[400:] = 255  # the cards and footer painted over: still in the DOM, not shown
    below = [b for b in found.shown if b.box[1] >= 400]
    assert len(blocks(dom, covered).shown) == len(found.shown) - len(below)
    assert blocks(dom, covered).hidden == len(below)


def test_block_weights_follow_characters_font_size_and_image_size() -> None:
    image = np.random.default_rng(0).integers(0, 256, (400, 400, 3), dtype=np.uint8)
    big = el("h1", (0, 0, 300, 60), "Hello") | {"font": {"size": "48px"}}
    tiny = el("p", (0, 100, 300, 10), "Hello") | {"font": {"size": "4px"}}
    picture = el("img", (0, 200, 200, 128), name="A harbour")
    found = blocks([big, tiny, picture], image).shown
    assert [b.weight for b in found[:2]] == [5 * 3.0, 5 * _blocks.FONT_SCALE_MIN]
    assert found[2].kind == "img" and found[2].text == "a harbour"
    assert found[2].weight == pytest.approx((200 * 128) ** 0.5 / _blocks.REPLACED_PX)
    off_page = el("p", (500, 500, 50, 20), "Gone")
    assert blocks([off_page], image).shown == []


def test_exact_matches_pair_repeated_texts_in_document_order() -> None:
    ref = [block(0, "read more", 0), block(1, "read more", 100), block(2, "title", 200)]
    cand = [block(0, "title", 0), block(1, "read more", 50), block(2, "read more", 300)]
    pairs = _match.match(ref, cand)
    assert [(p.ref, p.cand, p.similarity) for p in pairs] == [(0, 1, 1.0), (1, 2, 1.0), (2, 0, 1.0)]


def test_fuzzy_matches_need_a_shared_word_and_half_the_characters() -> None:
    ref = [block(0, "walk the ridge before the crowds", 0), block(1, "prices", 50)]
    cand = [block(0, "walk the ridge before crowds arrive", 0), block(1, "costs", 50)]
    pairs = _match.match(ref, cand)
    assert len(pairs) == 1 and pairs[0].ref == 0 and pairs[0].cand == 0
    assert _match.MATCH_MIN <= pairs[0].similarity < 1.0


def test_replaced_blocks_match_by_name_then_by_kind() -> None:
    ref = [block(0, "logo", 0, kind="img"), block(1, "hero", 100, kind="img")]
    cand = [block(0, "banner", 0, kind="img"), block(1, "logo", 100, kind="img")]
    pairs = {(p.ref, p.cand): p.similarity for p in _match.match(ref, cand)}
    assert pairs == {(0, 1): 1.0, (1, 0): _match.KIND_SIMILARITY}


def test_content_is_a_weighted_jaccard_index_of_blocks() -> None:
    ref = [block(0, "aaaa", 0), block(1, "bbbbbb", 100)]  # weights 4 and 6
    cand = [block(0, "aaaa", 0), block(1, "cc", 100)]  # b missing, c added (weight 2)
    sizes = Sizes(width=400, ref_height=200, cand_height=200)
    terms = content_terms(ref, cand, _match.match(ref, cand), sizes)
    assert terms["coverage"] == 4 / 10 and terms["added"] == 2 / 6
    assert terms["content"] == 4 / (10 + 2)
    assert terms["position"] == 1.0


def test_position_is_relative_to_each_page_height() -> None:
    ref = [block(0, "aaaa", 100)]
    sizes = Sizes(width=400, ref_height=1000, cand_height=2000)
    twice = content_terms(ref, [block(0, "aaaa", 210)], _match.match(ref, ref), sizes)
    assert twice["position"] == 1.0  # the same place on a page twice as tall
    elsewhere = content_terms(ref, [block(0, "aaaa", 1210)], _match.match(ref, ref), sizes)
    assert elsewhere["position"] == pytest.approx(1 - 0.5 / 0.5 * 1.0, abs=1e-9)


def test_in_sequence_is_the_heaviest_increasing_subsequence() -> None:
    assert in_sequence([0, 1, 2], [1.0, 1.0, 1.0]) == [True, True, True]
    assert in_sequence([2, 1, 0], [1.0, 3.0, 1.0]) == [False, True, False]
    assert in_sequence([0, 4, 1, 2, 3], [1.0, 10.0, 1.0, 1.0, 1.0]) == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert in_sequence([0, 4, 1, 2, 3], [1.0, 2.0, 1.0, 1.0, 1.0]) == [
        True,
        False,
        True,
        True,
        True,
    ]
    assert in_sequence([], []) == []


def test_content_read_out_of_turn_is_misplaced() -> None:
    """Sections swapped in reading order: the lighter one is out of sequence and counts as
    fully misplaced, however near its page-relative place it lands."""
    ref = [block(0, "aaaaaa", 0), block(1, "bbbb", 30)]  # weights 6 and 4
    cand = [block(0, "bbbb", 0), block(1, "aaaaaa", 30)]  # read b, then a
    sizes = Sizes(width=400, ref_height=1000, cand_height=1000)
    terms = content_terms(ref, cand, _match.match(ref, cand), sizes)
    assert terms["content"] == 1.0 and terms["order"] == 6 / 10
    d = 30 / 1000 / 0.5  # a moved 30 px down a 1000 px page
    assert terms["position"] == pytest.approx(1 - (6 * d + 4 * 1.0) / 10, abs=1e-12)
    same = content_terms(ref, ref, _match.match(ref, ref), sizes)
    assert same["order"] == 1.0 and same["position"] == 1.0


def test_row_map_follows_the_blocks_and_appends_the_candidate_tail() -> None:
    ref = [block(0, "top", 10, h=30), block(1, "low", 60, h=20)]
    cand = [block(0, "top", 50, h=30), block(1, "low", 20, h=20)]  # moved down, moved up
    sizes = Sizes(width=400, ref_height=100, cand_height=150)
    rows = row_map(ref, cand, _match.match(ref, cand), sizes)
    assert rows[0] == 40 and rows[10] == 50 and rows[39] == 79  # above and in "top": +40
    assert rows[40] == 80  # between the blocks: the move of the block above
    assert rows[60] == 20 and rows[79] == 39  # in "low": -40
    assert rows[99] == 59
    assert list(rows[100:]) == list(range(100, 150))  # below the lowest mapped row: appended
    assert list(identity_map(sizes)) == list(range(150))


def test_aligned_rows_read_the_candidate_through_the_map() -> None:
    cand = np.arange(6 * 2 * 3, dtype=np.uint8).reshape(6, 2, 3)
    ref = np.zeros((4, 3, 3), np.uint8)
    aligned = Aligned(cand, ref, np.array([2, 3, -1, 0, 5]))
    got, want = aligned.rows(0, 5)
    assert got.shape == (5, 3, 3) and want.shape == (5, 3, 3)
    assert (got[0, :2] == cand[2]).all() and (got[1, :2] == cand[3]).all()
    assert (got[2] == 255).all() and (got[:, 2] == 255).all()  # white row, white-padded column
    assert (want[4] == 255).all()  # below the reference's last row


def colour_of(cand: np.ndarray, ref: np.ndarray) -> dict[str, float]:
    return _colour.colour(
        Aligned(cand, ref, identity_map(Sizes(ref.shape[1], *ref.shape[:1], cand.shape[0])))
    )


def test_colour_is_exact_for_identical_pages_and_lost_in_grey() -> None:
    ref = draw(landing())
    same = colour_of(ref.copy(), ref)
    assert same["colour"] == 1.0 and same["colour_error"] == 0.0
    grey = np.repeat((ref @ np.array([0.299, 0.587, 0.114])).astype(np.uint8)[..., None], 3, 2)
    lost = colour_of(grey, ref)
    assert lost["colour_tiles_candidate"] == 0.0 and lost["colour_tiles_reference"] > 0
    assert lost["colour"] < 0.5
    painted = grey.copy()
    painted[100:380] = (200, 40, 40)  # colour the reference does not have costs too
    assert colour_of(painted, grey)["colour"] < 0.5


def test_colour_forgives_a_shift_of_less_than_a_tile() -> None:
    ref = np.full((200, 200, 3), 255, np.uint8)
    ref[64:128, 64:128] = (30, 120, 220)
    moved = np.full_like(ref, 255)
    moved[70:134, 60:124] = (30, 120, 220)
    assert colour_of(moved, ref)["colour"] > 0.7
    assert colour_of(np.full_like(ref, 255), ref)["colour"] == 0.0


def test_colour_does_not_apply_between_grey_pages() -> None:
    grey = np.full((64, 64, 3), 128, np.uint8)
    result = colour_of(np.full_like(grey, 30), grey)
    assert result["colour_applicable"] == 0.0 and result["colour"] == 1.0


def test_ssim_tiles_weigh_what_the_pages_hold() -> None:
    ref = draw(landing())
    blank = np.full_like(ref, 255)
    result = structure(Aligned(blank, ref, identity_map(Sizes(ref.shape[1], 900, 900))))
    assert result["ssim_unweighted"] > 0.5 > 0.1 > result["ssim"]
    same = structure(Aligned(ref.copy(), ref, identity_map(Sizes(ref.shape[1], 900, 900))))
    assert same["ssim"] == 1.0 and same["ssim_unweighted"] == 1.0


def test_each_colour_direction_counts_half() -> None:
    """The reference's colours all kept, a large foreign colour added: half the error."""
    ref = np.full((256, 256, 3), 255, np.uint8)
    ref[:32, :32] = (184, 63, 69)  # a small red title
    cand = ref.copy()
    cand[128:, :] = (0, 200, 40)  # half the page green
    result = colour_of(cand, ref)
    assert result["colour_error_reference"] == 0.0 and result["colour_error_candidate"] > 20
    assert result["colour_error"] == pytest.approx(result["colour_error_candidate"] / 2)
