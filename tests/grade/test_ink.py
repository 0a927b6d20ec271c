"""Unit tests for recon.grade._ink: the evidence-as-imagery waiver counts only text a
person can see."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from recon.grade import _ink
from recon.grade._ink import MIN_CONTRAST, contrast, visible, visible_texts
from tests.grade.synthetic import el


def texted(
    fill: tuple[float, ...] = (0, 0, 0, 1),
    *,
    opacity: float = 1.0,
    backdrop: tuple[int, int, int] = (255, 255, 255),
    size: float = 16,
    area: int = 2000,
    box: tuple[int, int, int, int] = (8, 16, 200, 18),
    **more: Any,
) -> dict[str, Any]:
    """A ``<p>`` with own text and the ink the snapshot records for it."""
    ink = {
        "fill": list(fill),
        "opacity": opacity,
        "backdrop": list(backdrop),
        "size": size,
        "area": area,
        "box": list(box),
    }
    return el("p", box, "Hello world!") | {"ink": ink | more}


def test_wcag_contrast_ratio() -> None:
    assert contrast((0, 0, 0), (255, 255, 255)) == pytest.approx(21.0)
    assert contrast((119, 119, 119), (119, 119, 119)) == 1.0
    assert contrast((204, 204, 204), (255, 255, 255)) == pytest.approx(1.61, abs=0.01)
    assert contrast((255, 255, 255), (204, 204, 204)) == contrast((204, 204, 204), (255,) * 3)


@pytest.mark.parametrize(
    ("element", "seen"),
    [
        (texted(), True),
        (texted((204, 204, 204, 1)), True),  # light grey on white: faint, but there
        (texted((0, 0, 0, 0.2)), True),
        (texted((0, 0, 0, 0.01)), False),  # the reported attack: 1 % alpha
        (texted((0, 0, 0, 0)), False),
        (texted(opacity=0.05), False),  # ancestors' opacity multiplied down to 5 %
        (texted((0, 0, 0, 0.5), opacity=0.2), False),  # 10 % in all
        (texted((250, 250, 250, 1)), False),  # the colour of its background
        (texted((20, 30, 90, 1), backdrop=(20, 30, 90)), False),
        (texted(size=0), False),  # font-size: 0
        (texted(size=4), False),
        (texted(area=1, box=(8, 16, 1, 1)), False),  # clipped to a visually-hidden 1x1 px
        (texted(area=0, box=(0, 0, 0, 0)), False),
        (texted() | {"painted": False}, False),  # visibility: hidden
    ],
)
def test_what_a_person_can_see(element: dict[str, Any], seen: bool) -> None:
    assert visible(element) is seen


def test_the_threshold_sits_between_faint_and_ghost_text() -> None:
    alphas = [a / 100 for a in range(101)]
    shown = [a for a in alphas if visible(texted((0, 0, 0, a)))]
    assert shown == alphas[alphas.index(shown[0]) :]  # monotone in alpha
    assert 0.15 <= shown[0] <= 0.2  # black on white shows from about 18 % alpha
    first = _ink.ink_contrast(texted((0, 0, 0, shown[0]))["ink"])
    assert first >= MIN_CONTRAST > _ink.ink_contrast(texted((0, 0, 0, shown[0] - 0.01))["ink"])


def test_text_is_read_against_what_the_capture_shows_under_it() -> None:
    white = texted((255, 255, 255, 1))  # the colour chain says white on white
    photo = np.zeros((200, 400, 3), dtype=np.uint8)
    photo[:, :, 2] = 90  # a dark photo (or a sibling's background) under the heading
    assert visible(white, photo)
    assert not visible(white)  # without the capture, only the colours are known
    assert not visible(texted((255, 255, 255, 0.01)), photo)
    light = np.full((200, 400, 3), 250, dtype=np.uint8)
    assert not visible(white, light)  # white text on a white part of an image
    black = texted()
    assert visible(black, light) and not visible(black, np.zeros_like(photo))
    glyphs = light.copy()
    glyphs[16:34, 8:60:3] = 0  # the glyphs themselves: a minority of the line box
    assert _ink.backdrop(black, glyphs) == [250.0, 250.0, 250.0]
    assert _ink.backdrop(texted(box=(900, 900, 10, 10)), light) == [255.0, 255.0, 255.0]


def test_snapshots_without_ink_keep_the_old_rule() -> None:
    assert visible(el("p", (0, 0, 10, 10), "hi"))
    assert not visible(el("p", (0, 0, 10, 10), "hi", color="rgba(0, 0, 0, 0)"))
    assert not visible(el("div", (0, 0, 10, 10)))  # no own text


def test_visible_texts_count_where_the_text_shows_not_the_element_box() -> None:
    wide = texted(box=(8, 16, 100, 18)) | {"box": [0, 0, 1440, 900]}
    assert visible_texts([wide], (0, 0, 1440, 900)) == 1
    assert visible_texts([wide], (0, 400, 1440, 500)) == 0  # the box reaches, the text not
    faint = texted((0, 0, 0, 0.01))
    assert visible_texts([faint, wide], (0, 0, 1440, 900)) == 1
