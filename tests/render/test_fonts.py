"""Pinned fonts: chromium sees only the fonts shipped in recon/render/fonts/."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from recon.errors import HarnessError
from recon.render import Viewport
from recon.render.browser import (
    CJK,
    FONT_DIR,
    FONTS,
    SANS,
    chromium_path,
    open_browser,
    verify_fonts,
    write_fontconfig,
)
from recon.render.page import load, open_page

STACKS = {
    "sans-serif": "Liberation Sans",
    "serif": "Liberation Serif",
    "monospace": "Liberation Mono",
    "system-ui": "Liberation Sans",
    "inherit": "Liberation Serif",  # no font-family at all: the default font is serif
    "Arial": "Liberation Sans",  # metric-compatible twins, as Debian aliases them
    "'Courier New'": "Liberation Mono",
    "'DejaVu Sans', serif": "Liberation Serif",  # installed on the host, invisible here
    "'Segoe UI', Roboto, monospace": "Liberation Mono",  # unknown names fall through
}


def test_the_shipped_fonts_are_the_pinned_ones() -> None:
    verify_fonts()
    assert sorted(p.name for p in Path(FONT_DIR).glob("*.ttf")) == sorted(FONTS)
    license_text = (Path(FONT_DIR) / "LICENSE").read_text()
    assert "SIL Open Font License" in license_text  # Liberation
    assert "Apache License" in license_text and "DroidSansFallback.ttf" in license_text


def test_a_changed_font_is_refused(tmp_path: Path) -> None:
    fonts = tmp_path / "fonts"
    shutil.copytree(FONT_DIR, fonts)
    (fonts / "LiberationSans-Regular.ttf").write_bytes(b"not the pinned font")
    with pytest.raises(HarnessError, match=r"LiberationSans-Regular\.ttf: pinned font changed"):
        verify_fonts(fonts)
    (fonts / "LiberationSans-Regular.ttf").unlink()
    with pytest.raises(HarnessError, match="pinned font missing"):
        verify_fonts(fonts)


def test_fontconfig_names_only_the_pinned_folder(tmp_path: Path) -> None:
    text = write_fontconfig(tmp_path).read_text()
    assert text.count("<dir>") == 1 and f"<dir>{FONT_DIR}</dir>" in text
    assert "<include" not in text  # nothing from /etc/fonts
    assert "<const>hintnone</const>" in text and "<const>rgba" not in text


@pytest.mark.browser
@pytest.mark.skipif(
    not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
)
def test_every_family_resolves_to_a_pinned_font() -> None:
    html = "".join(
        f'<p id="p{i}" style="font-family: {stack}">Type iiii WWWW</p>'
        for i, stack in enumerate(STACKS)
    )
    with _served(html, 400) as session:
        fonts = _platform_fonts(session, [f"#p{i}" for i in range(len(STACKS))])
    used = dict(zip(STACKS, fonts, strict=True))
    assert used == {stack: [family] for stack, family in STACKS.items()}


@contextmanager
def _served(html: str, width: int) -> Iterator[Any]:
    """A page serving ``html`` as its index, loaded in a fresh pinned-font browser."""
    with (
        open_browser() as browser,
        open_page(
            browser,
            lambda p: html.encode() if p == "index.html" else None,
            Viewport("s", width, 600),
        ) as session,
    ):
        load(session, "/", 5000)
        yield session


def _platform_fonts(session: Any, selectors: list[str]) -> list[list[str]]:
    """The families chromium drew each selector's text with (CDP's platform fonts)."""
    cdp = session.cdp
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    cdp.send("CSS.enable")
    used = []
    for selector in selectors:
        node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})
        fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})
        used.append([f["familyName"] for f in fonts["fonts"]])
    return used


# One line each of Chinese, Japanese (kana and kanji) and Korean, as real pages hold them.
CJK_LINES = {"zh": "中文网页的标题", "ja": "ひらがなとカタカナ", "ko": "한국어 웹 페이지"}


@pytest.mark.browser
@pytest.mark.skipif(
    not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
)
def test_cjk_text_renders_with_the_pinned_fallback_not_as_boxes() -> None:
    """Without a CJK font every such character is the same empty box (issue 28 item 4):
    each line's glyphs come from the pinned fallback, the Latin beside them from the
    stack's own font, and two different characters draw two different shapes."""
    html = "".join(
        f'<p id="{lang}" style="font-family: sans-serif">Web {line}</p>'
        for lang, line in CJK_LINES.items()
    ) + (
        '<p style="font: 64px sans-serif"><span id="a">中</span></p>'
        '<p style="font: 64px sans-serif"><span id="b">文</span></p>'
    )
    with _served(html, 600) as session:
        fonts = _platform_fonts(session, [f"#{lang}" for lang in CJK_LINES])
        used = {lang: sorted(f) for lang, f in zip(CJK_LINES, fonts, strict=True)}
        shapes = [
            session.page.locator(f"#{glyph}").screenshot(animations="disabled")
            for glyph in ("a", "b")
        ]
    assert used == {lang: sorted([SANS, CJK]) for lang in CJK_LINES}
    assert shapes[0] != shapes[1]
