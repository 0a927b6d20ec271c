"""The stale banner: what every page of a published site says once a later build of its
release failed (issue 27, item 3). Pure bytes in, bytes out.

The banner sits right after ``<body>`` between two markers, so marking a page again
replaces it instead of stacking a second one. It carries its own inline style: it shows
even where the site's stylesheet does not load.
"""

from __future__ import annotations

import html
import re

from recon.model import StaleMark

START = b"<!-- recon:stale -->"
END = b"<!-- /recon:stale -->"
BODY = re.compile(rb"<body\b[^>]*>", re.IGNORECASE)
OLD = re.compile(re.escape(START) + rb".*?" + re.escape(END), re.DOTALL)
STYLE = ("background:#ffebe9;border:2px solid #cf222e;color:#1f2328;padding:.6rem .9rem;"
         "margin:0;font:15px/1.4 system-ui,sans-serif")  # fmt: skip
SHOWN = 20  # failed cells named on the page; the rest are counted (stale.json has them all)


def banner(mark: StaleMark) -> bytes:
    """The banner's HTML: stale, since when, and the failed cells with their errors."""
    items = "".join(
        f"<li><code>{html.escape(f.cell)}</code>: {html.escape(f.error)}</li>"
        for f in mark.failed[:SHOWN]
    )
    more = len(mark.failed) - SHOWN
    if more > 0:
        items += f"<li>and {more} more (releases/{mark.release}/stale.json)</li>"
    text = (
        f'<div class="stale" role="alert" style="{STYLE}"><strong>Stale: these numbers are '
        f"not current.</strong> The build of release <code>{html.escape(mark.release)}</code> "
        f"at {html.escape(mark.at)} failed, so this page still shows an earlier build. "
        f"Failed: <ul>{items}</ul></div>"
    )
    return START + text.encode() + END


def mark_page(page: bytes, mark: StaleMark) -> bytes:
    """``page`` with the banner of ``mark`` (any older banner replaced)."""
    page = unmark_page(page)
    found = BODY.search(page)
    at = found.end() if found is not None else 0
    return page[:at] + banner(mark) + page[at:]


def unmark_page(page: bytes) -> bytes:
    """``page`` without a stale banner."""
    return OLD.sub(b"", page)
