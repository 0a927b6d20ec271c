"""Unit tests for recon.grade._paints: paint sites and the images a snapshot holds."""

from __future__ import annotations

import base64
import io
from urllib.parse import quote

import numpy as np
from PIL import Image

from recon.grade import _paints
from recon.grade._paints import Site, data_bytes, decode_raster, inline_images, sites
from tests.grade.synthetic import el


def png(side: int = 20, value: int = 90) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.full((side, side, 3), value, dtype=np.uint8)).save(buf, "PNG")
    return buf.getvalue()


def data_url(body: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64," + base64.b64encode(body).decode()


def painting(tag: str, box: tuple[int, int, int, int], *paints: dict) -> dict:
    return el(tag, box) | {"paints": list(paints)}


def test_data_urls_decode_base64_and_percent_encoded() -> None:
    body = png()
    assert data_bytes(data_url(body)) == body
    spaced = data_url(body)[:40] + "\n " + data_url(body)[40:]  # whitespace in base64 is legal
    assert data_bytes(spaced) == body
    assert data_bytes(data_url(body).rstrip("=")) == body  # padding is optional
    assert data_bytes("data:image/svg+xml,%3Csvg%2F%3E") == b"<svg/>"
    assert data_bytes("data:image/png;base64,@@@") is None
    assert data_bytes("http://recon.invalid/a.png") is None
    assert decode_raster(body) is not None and decode_raster(b"<svg/>") is None


def test_inline_images_by_url_with_where_they_are_painted_first() -> None:
    url = data_url(png())
    svg = f"<svg xmlns='http://www.w3.org/2000/svg'><image href='{data_url(png(30))}'/></svg>"
    svg_url = "data:image/svg+xml," + quote(svg)
    dom = [
        painting("div", (0, 0, 100, 50), {"via": "background::after", "url": url}),
        painting("img", (0, 60, 20, 20), {"via": "img", "url": url}),  # the same image again
        painting("li", (0, 90, 100, 20), {"via": "list-style", "url": svg_url}),
        painting("p", (0, 120, 9, 9), {"via": "background", "url": url[:64], "truncated": True}),
    ]
    found = inline_images([dom])
    assert sorted(found) == sorted([url, svg_url + "#0"])
    where, img = found[url]
    assert where == {"tag": "div", "via": "background::after", "box": [0, 0, 100, 50]}
    assert img.shape == (20, 20, 3) and found[svg_url + "#0"][1].shape == (30, 30, 3)


def test_paint_sites_replaced_and_unread_backgrounds() -> None:
    page = (0, 0, 1440, 3000)
    served = "http://recon.invalid/hero.jpg"
    dom = [
        painting("body", (8, 8, 1424, 900), {"via": "background", "url": "blob:x"}),
        painting("header", (0, 0, 1440, 400), {"via": "background", "url": served}),
        painting("div", (0, 400, 300, 300), {"via": "background::before", "url": "data:x"}),
        painting("img", (0, 700, 300, 200), {"via": "img", "url": served}),
        painting("input", (0, 900, 40, 40), {"via": "input", "url": served}),
        painting("canvas", (0, 950, 200, 100), {"via": "canvas", "url": ""}),
        el("video", (0, 1050, 320, 180)) | {"painted": False},  # hidden: paints nothing
        el("p", (0, 1300, 300, 20), "no paints: a snapshot from before them"),
    ]
    found = sites(dom, [served], page)
    assert found == [
        Site(page, False, "background", "body"),  # <body> paints the whole canvas
        Site((0, 400, 300, 300), False, "background::before", "div"),
        Site((0, 700, 300, 200), True, "img", "img"),
        Site((0, 900, 40, 40), True, "input", "input"),
        Site((0, 950, 200, 100), True, "canvas", "canvas"),
    ]
    host = el("my-app", (0, 0, 1440, 900)) | {"painted": False}  # a host hidden, its tree not
    host["paints"] = [
        {"via": "canvas", "url": "", "tag": "canvas", "box": [10, 20, 300, 150]},
        {"via": "background", "url": "blob:y", "tag": "div", "box": [0, 200, 50, 50]},
    ]
    assert sites([host], [], page) == [
        Site((10, 20, 300, 150), True, "canvas", "canvas"),  # the shadow element's own box
        Site((0, 200, 50, 50), False, "background", "div"),
    ]
    assert sites([el("img", (0, 0, 9, 9))], [], page) == [Site((0, 0, 9, 9), True, "img", "img")]
    assert _paints.short("x" * 100) == "x" * 64 + "…" and _paints.short("ab") == "ab"
