"""Renders of a study's pages by recon's own capture path, cached by digest.

Each page is one self-contained HTML file, served as the build's ``index.html`` at route
``/``; every other request (``placeholder.png``, which the study does not ship) is
answered as missing, on both sides alike. One browser renders the pages one after
another (:func:`recon.render.capture`: pinned fonts, no network, settled and proven
still). A render is kept in a cache folder under its key, the digest of the page's bytes,
the viewport and the renderer's code digest, so a re-run renders nothing that it has,
and a renderer change renders everything again::

    <cache>/<key[:2]>/<key>.json   {"png": <digest>, "dom": [...], "failure": ...}
    <cache>/<key[:2]>/<png>.png    the full-page still
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from recon.errors import HarnessError
from recon.grade.attempt import decode_png
from recon.model.viewport import Viewport
from recon.store import digest_bytes, digest_json, write_atomic

FORMAT = 1
"""Bump to render every cached page again (a change of what a cache record holds)."""

Shoot = Callable[[bytes], tuple[bytes, list[dict[str, Any]], str | None]]
"""``shoot(html)``: the full-page PNG, the DOM snapshot and the capture's failure."""


@dataclass(frozen=True)
class Render:
    """One page's full-page still (RGB), its PNG's digest and DOM snapshot."""

    digest: str
    image: np.ndarray
    dom: list[dict[str, Any]]
    failure: str | None
    cached: bool


def key(html: bytes, viewport: Viewport, renderer: str) -> str:
    """The cache key of one page's render."""
    return digest_json(
        {
            "format": FORMAT,
            "html": digest_bytes(html),
            "viewport": viewport.model_dump(),
            "renderer": renderer,
        }
    )


class Cache:
    """The cache folder: a render's record and still, by key."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _record(self, k: str) -> Path:
        return self.root / k[:2] / f"{k}.json"

    def get(self, k: str) -> tuple[bytes, list[dict[str, Any]], str | None] | None:
        """The cached PNG, DOM and failure, or None when absent or not intact."""
        try:
            record = json.loads(self._record(k).read_text(encoding="utf-8"))
            png = (self.root / k[:2] / f"{record['png']}.png").read_bytes()
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if digest_bytes(png) != record["png"]:
            return None
        return png, list(record["dom"]), record.get("failure")

    def put(self, k: str, png: bytes, dom: list[dict[str, Any]], failure: str | None) -> None:
        folder = self.root / k[:2]
        folder.mkdir(parents=True, exist_ok=True)
        png_digest = digest_bytes(png)
        write_atomic(folder / f"{png_digest}.png", png)
        record = {"png": png_digest, "dom": dom, "failure": failure}
        write_atomic(self._record(k), json.dumps(record, sort_keys=True).encode("utf-8"))


def render_all(
    pages: Mapping[str, Path],
    viewport: Viewport,
    renderer: str,
    cache: Cache,
    shooter: Callable[[], AbstractContextManager[Shoot]],
    progress: Callable[[str, bool], None] = lambda _name, _cached: None,
) -> dict[str, Render]:
    """Every page's render (name -> :class:`Render`), from the cache where it is there;
    the rest rendered in order by one ``shooter()`` (opened only when something is
    missing) and cached."""
    found: dict[str, Render] = {}
    missing: list[tuple[str, bytes, str]] = []
    for name, path in sorted(pages.items()):
        html = path.read_bytes()
        k = key(html, viewport, renderer)
        hit = cache.get(k)
        if hit is None:
            missing.append((name, html, k))
            continue
        found[name] = _render(name, *hit, cached=True)
        progress(name, True)
    if missing:
        with shooter() as shoot:
            for name, html, k in missing:
                png, dom, failure = shoot(html)
                cache.put(k, png, dom, failure)
                found[name] = _render(name, png, dom, failure, cached=False)
                progress(name, False)
    return found


def _render(
    name: str, png: bytes, dom: list[dict[str, Any]], failure: str | None, *, cached: bool
) -> Render:
    image = decode_png(png)
    if image is None:
        raise HarnessError(f"{name}: the render's full-page still is not a decodable PNG")
    return Render(digest_bytes(png), image, dom, failure, cached)


def page_reader(html: bytes) -> Callable[[str], bytes | None]:
    """The build of one self-contained page: ``index.html`` and nothing else."""
    return lambda path: html if path == "index.html" else None


def browser_shooter(viewport: Viewport) -> AbstractContextManager[Shoot]:
    """One chromium (recon's render boundary) that captures each page at ``/``."""
    from recon.render import open_browser
    from recon.render.capture import capture

    @contextmanager
    def opened() -> Iterator[Shoot]:
        with open_browser() as browser:

            def shoot(html: bytes) -> tuple[bytes, list[dict[str, Any]], str | None]:
                shot = capture(browser, page_reader(html), "/", viewport)
                return shot.full_png, shot.dom, shot.failure

            yield shoot

    return opened()
