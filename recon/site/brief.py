"""A case's public brief (Markdown) as safe HTML for its case page.

A small subset, enough for briefs: ``#`` headings, ``-``/``*`` list items (with indented
continuation lines), paragraphs, inline ``code`` and ``**bold**``. Every character of the
text is escaped first (HTML entities in the source are decoded, then escaped again), so a
brief can show markup but never inject it. Anything else is shown as text.
"""

from __future__ import annotations

import html
import re

from markupsafe import Markup, escape

HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
ITEM = re.compile(r"^[-*]\s+(.*)$")
CODE = re.compile(r"`([^`]+)`")
BOLD = re.compile(r"\*\*([^*]+)\*\*")


def inline(text: str) -> str:
    """Escaped text with ``code`` and ``**bold**`` marked up."""
    safe = str(escape(html.unescape(text)))
    safe = CODE.sub(r"<code>\1</code>", safe)
    return BOLD.sub(r"<strong>\1</strong>", safe)


def _blocks(lines: list[str]) -> list[list[str]]:
    blocks: list[list[str]] = [[]]
    for line in lines:
        if line.strip():
            blocks[-1].append(line)
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def _items(block: list[str]) -> list[str]:
    items: list[str] = []
    for line in block:
        found = ITEM.match(line.strip()) if not line.startswith((" ", "\t")) else None
        if found or not items:
            items.append(found.group(1) if found else line.strip())
        else:
            items[-1] += " " + line.strip()
    return items


def _block(block: list[str]) -> str:
    heading = HEADING.match(block[0])
    if heading and len(block) == 1:
        level = min(6, len(heading.group(1)) + 2)  # the page's own h1 and h2 come first
        return f"<h{level}>{inline(heading.group(2))}</h{level}>"
    if ITEM.match(block[0]):
        return "<ul>" + "".join(f"<li>{inline(i)}</li>" for i in _items(block)) + "</ul>"
    if heading:
        return _block(block[:1]) + _block(block[1:])
    return "<p>" + inline(" ".join(line.strip() for line in block)) + "</p>"


def render(markdown: str) -> Markup:
    """The brief as HTML (already escaped: the template prints it as is)."""
    return Markup("\n".join(_block(b) for b in _blocks(markdown.splitlines())))
