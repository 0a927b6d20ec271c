"""Synthetic pages for metric tests: a DOM snapshot and the screenshot drawn from it.

Pages are built by code from a list of elements, so a defect (recolour, shift, a
missing section) changes the pixels and the DOM consistently, as a real render would.
Text is drawn as glyph-like stripes whose pattern depends on each character.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

WIDTH = 640
GLYPH = 7
NAVY, SKY, WHITE, INK, GREY = (
    "rgb(20, 30, 90)",
    "rgb(200, 225, 250)",
    "rgb(255, 255, 255)",
    "rgb(30, 30, 30)",
    "rgb(235, 235, 235)",
)
CLEAR = "rgba(0, 0, 0, 0)"


def el(
    tag: str,
    box: Sequence[int],
    text: str = "",
    *,
    color: str = INK,
    background: str = CLEAR,
    role: str = "",
    name: str = "",
) -> dict[str, Any]:
    return {
        "tag": tag,
        "role": role,
        "name": name,
        "text": text,
        "box": list(box),
        "color": color,
        "background": background,
        "font": {"family": "serif", "size": "16px", "weight": "400"},
    }


def landing(width: int = WIDTH) -> list[dict[str, Any]]:
    """A header, a hero section, three feature cards and a footer."""
    dom = [
        el("html", (0, 0, width, 900)),
        el("body", (0, 0, width, 900)),
        el("header", (0, 0, width, 80), background=NAVY),
        el("h1", (24, 24, 260, 32), "Acme Widgets", color=WHITE),
        el("nav", (360, 28, 260, 24), role="navigation", name="Main"),
        el("a", (360, 28, 80, 24), "Pricing", color=WHITE),
        el("a", (460, 28, 80, 24), "Docs", color=WHITE),
        el("section", (0, 100, width, 280), background=SKY),
        el("h2", (40, 140, 480, 40), "Build faster with widgets"),
        el("p", (40, 200, 520, 60), "Widgets snap together so your team ships in days."),
        el("a", (40, 290, 160, 44), "Get started", color=WHITE, background=NAVY, role="button"),
    ]
    for i, title in enumerate(("Fast", "Safe", "Cheap")):
        x = 24 + i * 204
        dom += [
            el("article", (x, 420, 188, 200), background=GREY),
            el("h3", (x + 12, 436, 160, 28), title),
            el("p", (x + 12, 476, 160, 120), f"{title} widgets for every team, every day."),
        ]
    dom += [
        el("footer", (0, 820, width, 80), background=NAVY),
        el("p", (24, 848, 300, 24), "© 2024 Acme", color=WHITE),
    ]
    return dom


def draw(dom: Sequence[dict[str, Any]], height: int = 900, width: int = WIDTH) -> np.ndarray:
    """The screenshot of ``dom``: backgrounds in order, then text stripes in its colour."""
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    for e in dom:
        x, y, w, h = e["box"]
        if e["background"] != CLEAR:
            img[max(0, y) : y + h, max(0, x) : x + w] = rgb(e["background"])
        for i, ch in enumerate(e["text"]):
            gx = x + i * GLYPH
            if gx + GLYPH > x + w:
                break
            code = ord(ch)
            for row in range(min(h, 16)):
                if (code >> (row % 7)) & 1 and y + row >= 0:
                    img[y + row : y + row + 1, max(0, gx) : gx + GLYPH - 2] = rgb(e["color"])
    return img


def rgb(colour: str) -> tuple[int, int, int]:
    r, g, b = (int(v) for v in colour[colour.index("(") + 1 : -1].split(",")[:3])
    return r, g, b


def shifted(dom: Sequence[dict[str, Any]], dy: int, below: int) -> list[dict[str, Any]]:
    """Every element starting at or below ``below`` moved down by ``dy``."""
    out = []
    for e in dom:
        x, y, w, h = e["box"]
        out.append(e | {"box": [x, y + dy if y >= below else y, w, h]})
    return out


def without(dom: Sequence[dict[str, Any]], top: int, bottom: int) -> list[dict[str, Any]]:
    """The DOM minus every element lying within rows top..bottom."""
    return [e for e in dom if not (e["box"][1] >= top and e["box"][1] + e["box"][3] <= bottom)]


def recoloured(dom: Sequence[dict[str, Any]], tag: str, background: str) -> list[dict[str, Any]]:
    return [e | {"background": background} if e["tag"] == tag else e for e in dom]
