"""The caps of full-page stills (pure: no browser)."""

from __future__ import annotations

from recon.render.stills import MAX_HEIGHT, MAX_PIXELS, MAX_WIDTH, clip_note, still_clip


def test_a_page_within_the_caps_is_shown_whole() -> None:
    for size in [(640, 480), (1440, 20_000), (390, MAX_HEIGHT), (MAX_WIDTH, 8192)]:
        assert still_clip(*size) == size
        assert clip_note(*size) is None


def test_a_page_past_a_cap_is_clipped_from_its_top_left_and_says_so() -> None:
    assert still_clip(640, 1_000_000) == (640, MAX_HEIGHT)
    assert still_clip(1_000_000, 480) == (MAX_WIDTH, 480)
    assert still_clip(1440, 30_000) == (1440, MAX_PIXELS // 1440)  # the pixel cap
    assert still_clip(10**6, 10**6) == (MAX_WIDTH, MAX_PIXELS // MAX_WIDTH)
    assert clip_note(640, 1_000_000) == (
        f"full-page still clipped to 640x{MAX_HEIGHT} px of the page's 640x1000000 px "
        f"(at most {MAX_WIDTH} px wide, {MAX_HEIGHT} px tall, {MAX_PIXELS} pixels)"
    )
    assert clip_note(1440, 30_000) == clip_note(1440, 30_000)  # the same text every time
