"""Tiny HTML building blocks: every string is escaped unless it is already ``Html``."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence

DASH = "—"


class Html(str):
    """Markup that is already safe; anything else passed to these helpers is escaped."""

    __slots__ = ()


Cell = str | int | float | None


def esc(value: Cell) -> Html:
    """Escape a value for HTML text or attribute context; ``Html`` passes through."""
    if isinstance(value, Html):
        return value
    if value is None:
        return Html(DASH)
    if isinstance(value, float):
        return Html(html.escape(num(value)))
    return Html(html.escape(str(value), quote=True))


def num(value: float | None, places: int = 3) -> str:
    """A fixed-format number: integral values as integers, others with ``places`` decimals."""
    if value is None:
        return DASH
    if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.{places}f}"


def tag(name: str, body: Cell = "", **attrs: str) -> Html:
    """``<name attr="…">body</name>``; attribute names use ``_`` for ``-`` and a trailing ``_``."""
    rendered = "".join(
        f' {key.rstrip("_").replace("_", "-")}="{esc(val)}"' for key, val in attrs.items()
    )
    return Html(f"<{name}{rendered}>{esc(body)}</{name}>")


def join(parts: Iterable[Cell], sep: str = "\n") -> Html:
    return Html(sep.join(esc(part) for part in parts))


def link(href: str, text: Cell) -> Html:
    return tag("a", text, href=href)


def table(headers: Sequence[str], rows: Iterable[Sequence[Cell]], cls: str = "") -> Html:
    head = tag("tr", join((tag("th", h) for h in headers), ""))
    body = join(tag("tr", join((tag("td", c) for c in row), "")) for row in rows)
    attrs = {"class_": cls} if cls else {}
    return tag("table", Html(f"<thead>{head}</thead>\n<tbody>\n{body}\n</tbody>"), **attrs)


def section(title: str, *parts: Cell) -> Html:
    return tag("section", join([tag("h2", title), *parts]))


def document(title: str, body: Html, root: str) -> bytes:
    """A whole page; ``root`` is the relative path back to the site root (``""`` or ``"../"``)."""
    text = (
        "<!doctype html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"{tag('title', title)}\n"
        f'<link rel="stylesheet" href="{esc(root)}style.css">\n'
        f"</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
    return text.encode("utf-8")


STYLE = """\
:root { --fg: #1b1f24; --muted: #59636e; --line: #d0d7de; --accent: #0969da; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, sans-serif; color: var(--fg); margin: 0 auto;
       max-width: 1200px; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.6rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; border-bottom: 1px solid var(--line); }
a { color: var(--accent); }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid var(--line); padding: .25rem .6rem; text-align: left; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
thead th { background: #f6f8fa; }
.banner { padding: .6rem 1rem; border-radius: 6px; margin: 0 0 1rem; }
.banner.formal { background: #dafbe1; border: 1px solid #4ac26b; }
.banner.informal { background: #fff8c5; border: 1px solid #d4a72c; }
.muted { color: var(--muted); }
.chart rect.bar { fill: var(--accent); }
.chart text { font: 12px system-ui, sans-serif; fill: var(--fg); }
.pairs { display: grid; grid-template-columns: 1fr 1fr; gap: 1rem; align-items: start; }
.pairs h3 { font-size: .95rem; margin: .5rem 0 .25rem; grid-column: 1 / -1; }
figure { margin: 0; }
figure img { max-width: 100%; border: 1px solid var(--line); display: block; }
figcaption { font-size: .85rem; color: var(--muted); }
code { font-size: .9em; }
"""
