"""Unit tests for recon.grade.policy, including the evidence-as-imagery cheats."""

from __future__ import annotations

import base64
import io
import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote, urlsplit

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Browser

from recon.grade import policy as policy_module
from recon.grade.attempt import decode_png, served_images
from recon.grade.policy import PolicyScore, score
from recon.model.grading import Policy
from recon.render import Capture, Viewport
from recon.render.browser import chromium_path
from recon.render.capture import capture
from tests.grade.synthetic import draw, el, landing

needs_chromium = pytest.mark.skipif(
    not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
)
EVIDENCE_PNG = (
    Path(__file__).resolve().parents[2] / "cases/html5-boilerplate/public/evidence/desktop.png"
)
EVIDENCE = np.asarray(Image.open(EVIDENCE_PNG).convert("RGB"))
ORIGIN = "http://recon.invalid"
POLICY = Policy(
    source_hosts=["html5boilerplate.com"], allowed_hosts=["fonts.gstatic.com", "*.ok.org"]
)
PAGE = [el("html", (0, 0, 1440, 900)), el("body", (8, 8, 1424, 884))]
FAITHFUL_DOM = [*PAGE, el("p", (8, 16, 264, 18), "Hello world! This is HTML5 Boilerplate.")]
SERVED = [[f"{ORIGIN}/", "served"], [f"{ORIGIN}/css/style.css", "served"]]


def grade(
    network: list[list[str]] = SERVED, dom: list[dict] = FAITHFUL_DOM, **kw: object
) -> PolicyScore:
    kw.setdefault("render", EVIDENCE)  # a faithful page renders like the evidence
    kw.setdefault("evidence", {"desktop.png": EVIDENCE})
    return score(POLICY, network, dom=dom, **kw)  # type: ignore[arg-type]


def reencode(img: np.ndarray, fmt: str, size: tuple[int, int] | None = None) -> np.ndarray:
    pil = Image.fromarray(img)
    if size:
        pil = pil.resize(size, Image.Resampling.LANCZOS)
    buf = io.BytesIO()
    pil.save(buf, fmt, **({"quality": 55} if fmt == "JPEG" else {}))
    return np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))


def kinds(result: PolicyScore) -> list[str]:
    return [r["kind"] for r in result.rows]


def test_faithful_page_has_no_violation_even_though_it_looks_like_the_evidence() -> None:
    result = grade(images={f"{ORIGIN}/icon.png": EVIDENCE[8:40, 8:40].copy()})
    assert result.score == 1.0 and result.rows == []
    assert result.terms["render_tiles_hashed"] == 1 and result.terms["images_hashed"] == 1
    assert result.terms["evidence_informative"] == 1


@pytest.mark.parametrize(
    "copy",
    [
        EVIDENCE,
        reencode(EVIDENCE, "JPEG"),
        reencode(EVIDENCE, "PNG", (1280, 800)),
        reencode(EVIDENCE, "WEBP", (1000, 625)),
    ],
    ids=["png", "jpeg", "rescaled", "webp-rescaled"],
)
def test_evidence_screenshot_as_full_page_background_is_flagged(copy: np.ndarray) -> None:
    network = [*SERVED, [f"{ORIGIN}/bg.jpg", "served"]]
    result = grade(network, PAGE, images={f"{ORIGIN}/bg.jpg": copy})
    assert result.score == 0.0 and result.terms["zeroed"] == 1.0
    served = next(r for r in result.rows if r["source"] == "served image")
    assert served["url"] == f"{ORIGIN}/bg.jpg" and served["evidence"] == "desktop.png"
    assert served["phash_distance"] <= POLICY.evidence_hash_distance and served["zeroes"]
    tile = next(r for r in result.rows if r["source"] == "render tile")
    assert tile["text_elements"] == 0  # the page's look comes from no text at all


def test_real_content_hidden_behind_one_image_is_flagged_without_any_request() -> None:
    cover = el("img", (0, 0, 1440, 900))  # a data: URI never reaches the network log
    result = grade(SERVED, [*FAITHFUL_DOM, cover])
    assert set(kinds(result)) == {"evidence_as_imagery"} and result.score == 0.0
    assert [r["source"] for r in result.rows] == ["painted box", "render tile"]
    assert result.rows[0]["tag"] == "img" and result.rows[0]["replaced"]
    assert result.rows[1]["image_cover"] == 1.0 and result.rows[1]["text_elements"] == 1


def test_transparent_text_does_not_excuse_a_background_screenshot() -> None:
    hidden = [*PAGE, el("p", (8, 16, 264, 18), "Hello world!", color="rgba(0, 0, 0, 0)")]
    assert kinds(grade(SERVED, hidden)) == ["evidence_as_imagery"]


def test_unrelated_images_and_blank_pages_are_not_flagged() -> None:
    rng = np.random.default_rng(0)
    images = {
        f"{ORIGIN}/photo.png": rng.integers(0, 256, (400, 600, 3), dtype=np.uint8),
        f"{ORIGIN}/tiny.png": EVIDENCE[:8, :8].copy(),
    }
    assert grade(images=images).rows == []
    blank = np.full_like(EVIDENCE, 255)
    assert grade(SERVED, PAGE, render=blank).rows == []  # flat: nothing to match


def test_a_busy_evidence_page_flags_its_screenshot_but_not_its_rebuild() -> None:
    dom = landing()
    shot = draw(dom)
    evidence = {"desktop.png": shot}
    rebuilt = score(POLICY, SERVED, dom=dom, render=shot, evidence=evidence)
    assert rebuilt.score == 1.0
    cheat = score(
        POLICY,
        [*SERVED, [f"{ORIGIN}/s.webp", "served"]],
        dom=PAGE,
        render=shot,
        images={f"{ORIGIN}/s.webp": reencode(shot, "WEBP", (480, 675))},
        evidence=evidence,
    )
    assert [r["source"] for r in cheat.rows] == ["served image", "render tile"]


def test_hosts_hotlinks_and_allowed_hosts() -> None:
    network = [
        *SERVED,
        ["https://cdn.example.com/logo.png", "blocked"],
        ["https://cdn.example.com/app.js", "blocked"],
        ["https://api.example.com/v1/items", "blocked"],
        ["wss://live.example.com/socket", "blocked"],
        ["https://fonts.gstatic.com/s/a.woff2", "blocked"],
        ["https://img.ok.org/a.png", "blocked"],
        ["data:image/png;base64,AAAA", "served"],
    ]
    result = grade(network)
    hosts = {(r["kind"], r["host"]) for r in result.rows}
    assert hosts == {
        ("remote_hotlink", "cdn.example.com"),
        ("disallowed_host", "api.example.com"),
        ("disallowed_host", "live.example.com"),
    }
    hotlink = next(r for r in result.rows if r["kind"] == "remote_hotlink")
    assert hotlink["requests"] == 2 and hotlink["outcomes"] == ["blocked"]
    assert result.score == 1.0 - 0.25 - 0.25  # each kind costs its penalty once
    assert result.terms["count_disallowed_host"] == 2 and result.terms["penalty_sum"] == 0.5


def test_iframe_of_the_source_zeroes_the_policy_score() -> None:
    frame = el("iframe", (0, 0, 1440, 900)) | {"src": "https://html5boilerplate.com/"}
    network = [*SERVED, ["https://html5boilerplate.com/", "blocked"]]
    result = grade(network, [*PAGE, frame], render=None)
    assert kinds(result) == ["source_iframe"] and not result.rows[0]["inferred"]
    assert result.score == 0.0


def test_iframe_without_src_in_the_snapshot_is_inferred_from_the_network() -> None:
    network = [*SERVED, ["https://html5boilerplate.com/index.html", "blocked"]]
    framed = grade(network, [*PAGE, el("iframe", (0, 0, 1440, 900))], render=None)
    assert kinds(framed) == ["source_iframe"] and framed.rows[0]["inferred"]
    unframed = grade(network, PAGE, render=None)
    assert kinds(unframed) == ["disallowed_host"] and unframed.score == 0.75
    asset = grade([[u.replace("index.html", "logo.png"), o] for u, o in network], PAGE, render=None)
    assert kinds(asset) == ["remote_hotlink"]


def test_asset_size_limits_and_custom_penalties() -> None:
    rule = Policy(
        max_asset_bytes=1000,
        max_total_bytes=1500,
        penalty={"asset_too_large": 0.1, "total_too_large": 0.05},
        zero_on=[],
    )
    sizes = {f"{ORIGIN}/a.png": 1200, f"{ORIGIN}/b.png": 900, f"{ORIGIN}/c.css": 10}
    result = score(rule, SERVED, asset_sizes=sizes)
    assert kinds(result) == ["asset_too_large", "total_too_large"]
    assert result.rows[0] | {} == {
        "kind": "asset_too_large",
        "url": f"{ORIGIN}/a.png",
        "bytes": 1200,
        "limit": 1000,
        "zeroes": False,
    }
    assert result.score == pytest.approx(0.85)
    many = Policy(penalty={"remote_hotlink": 0.7, "disallowed_host": 0.6}, zero_on=[])
    net = [["https://x.com/a.png", "blocked"], ["https://x.com/api", "blocked"]]
    assert score(many, net).score == 0.0  # floored at 0


def test_pages_of_any_height_and_determinism() -> None:
    tall = np.vstack([EVIDENCE, np.full((3000, 1440, 3), 255, dtype=np.uint8)])
    result = grade(SERVED, PAGE, render=tall)
    assert [r["tile"][1] for r in result.rows] == [0]  # only the top tile looks like it
    assert result.terms["render_tiles_hashed"] == 5
    one_px = grade(SERVED, PAGE, render=EVIDENCE[20:21])
    assert one_px.score == 1.0 and one_px.rows == []
    again = grade(SERVED, PAGE, render=tall)
    assert result.score.hex() == again.score.hex() and result.rows == again.rows


def test_origin_and_network_events_are_the_renderer_s() -> None:
    from recon.render.serve import ORIGIN as RENDER_ORIGIN
    from recon.render.serve import NetworkEvent

    assert policy_module.ORIGIN == ORIGIN == RENDER_ORIGIN
    events = [NetworkEvent(u, o) for u, o in [*SERVED, ["https://x.org/a.png", "blocked"]]]
    assert kinds(score(POLICY, events)) == ["remote_hotlink"]


# --- evidence however it is drawn: the snapshot's paint records -------------------------

EVIDENCE_URL = "data:image/png;base64," + base64.b64encode(EVIDENCE_PNG.read_bytes()).decode()
FAINT_INK = {"fill": [0, 0, 0, 0.01], "opacity": 1, "backdrop": [255, 255, 255], "size": 16}
FAINT = el(
    "p", (8, 16, 264, 18), "Hello world! This is HTML5 Boilerplate.", color="rgba(0, 0, 0, 0.01)"
)
FAINT["ink"] = FAINT_INK | {"area": 4000, "box": [8, 16, 264, 18]}


def painting(tag: str, box: tuple[int, int, int, int], *paints: tuple[str, str]) -> dict:
    return el(tag, box) | {"paints": [{"via": via, "url": url} for via, url in paints]}


def sources(result: PolicyScore) -> list[str]:
    return [r["source"] for r in result.rows]


def test_the_reported_attack_a_data_url_background_behind_faint_text_is_flagged() -> None:
    backdrop = painting("div", (0, 0, 1440, 900), ("background", EVIDENCE_URL))
    result = grade(SERVED, [*PAGE, backdrop, FAINT])
    assert result.score == 0.0 and sources(result) == ["inline image", "render tile"]
    inline = result.rows[0]
    assert inline["via"] == "background" and inline["tag"] == "div"
    assert inline["evidence"] == "desktop.png" and inline["url"].endswith("…")
    assert len(inline["url"]) < 100  # the row never carries the image's bytes
    assert result.rows[1]["text_elements"] == 0  # 1 % alpha is not text a person sees
    assert result.terms["inline_images_hashed"] == 1


@pytest.mark.parametrize(
    ("tag", "via"),
    [
        ("img", "img"),
        ("div", "background::before"),
        ("li", "list-style"),
        ("div", "border-image"),
        ("image", "svg-image"),
        ("video", "poster"),
        ("input", "input"),
        ("object", "object"),
    ],
)
def test_an_inline_evidence_image_is_flagged_by_its_bytes_wherever_it_is_painted(
    tag: str, via: str
) -> None:
    small = painting(tag, (100, 300, 360, 225), (via, EVIDENCE_URL))
    result = grade(SERVED, [*FAITHFUL_DOM, small], render=None)  # no pixels needed
    assert sources(result) == ["inline image"] and result.rows[0]["via"] == via
    assert result.score == 0.0


def test_inline_images_are_read_from_every_snapshot_and_inside_svgs() -> None:
    svg = (
        "<svg xmlns='http://www.w3.org/2000/svg'><image href='"
        + EVIDENCE_URL
        + "' width='1440' height='900'/></svg>"
    )
    svg_url = "data:image/svg+xml," + quote(svg)
    mobile = [*PAGE, painting("div", (0, 0, 390, 300), ("background", svg_url))]
    result = grade(SERVED, FAITHFUL_DOM, render=None, snapshots=[FAITHFUL_DOM, mobile])
    assert sources(result) == ["inline image"] and result.rows[0]["url"].startswith(
        "data:image/svg"
    )
    cut = painting("div", (0, 0, 390, 300), ("background", EVIDENCE_URL))
    cut["paints"][0] |= {"url": EVIDENCE_URL[:64], "truncated": True}
    assert grade(SERVED, [*FAITHFUL_DOM, cut], render=None).rows == []  # nothing to decode


def test_a_canvas_showing_the_evidence_is_flagged_by_its_pixels() -> None:
    page = np.full((1400, 1440, 3), 255, dtype=np.uint8)
    page[500:950, 360:1080] = reencode(EVIDENCE, "PNG", (720, 450))
    canvas = painting("canvas", (360, 500, 720, 450), ("canvas", ""))
    dom = [*PAGE, el("h1", (8, 16, 600, 40), "My page"), canvas]
    result = grade(SERVED, dom, render=page)
    assert sources(result) == ["painted box"] and result.rows[0]["tag"] == "canvas"
    assert result.rows[0]["replaced"] and result.score == 0.0
    assert grade(SERVED, dom[:-1], render=page).rows == []  # the same pixels, no paint site


def test_an_unread_background_is_judged_by_its_pixels_and_waived_by_visible_text() -> None:
    blob = painting("div", (0, 0, 1440, 900), ("background", "blob:http://recon.invalid/1"))
    hidden = grade(SERVED, [*PAGE, blob, FAINT])
    assert sources(hidden) == ["painted box", "render tile"] and hidden.score == 0.0
    assert not hidden.rows[0]["replaced"] and hidden.rows[0]["via"] == "background"
    shown = el("p", (8, 16, 264, 18), "Hello world! This is HTML5 Boilerplate.")
    assert grade(SERVED, [*PAGE, blob, shown]).rows == []  # honest text over an SVG pattern


def test_honest_text_over_a_served_background_photo_keeps_its_waiver() -> None:
    photo = f"{ORIGIN}/img/hero.jpg"
    rng = np.random.default_rng(1)
    hero = painting("header", (0, 0, 1440, 900), ("background", photo))
    heading = el("h1", (100, 100, 600, 60), "Hello world!", color="rgb(255, 255, 255)")
    heading["ink"] = {
        "fill": [255, 255, 255, 1],
        "opacity": 1,
        "backdrop": [255, 255, 255],  # the colour chain: white on white
        "size": 48,
        "area": 20000,
        "box": [100, 100, 600, 60],
    }
    render = EVIDENCE.copy()
    render[100:160, 100:700] = 40  # what the capture shows under the heading: the photo
    network = [*SERVED, [photo, "served"]]
    images = {photo: rng.integers(0, 256, (600, 900, 3), dtype=np.uint8)}
    result = grade(network, [*PAGE, hero, heading], images=images, render=render)
    assert result.rows == [] and result.score == 1.0
    assert result.terms["painted_boxes_hashed"] == 0  # a read background: judged by its bytes


# --- in chromium: each way of drawing the evidence, captured and graded ------------------

DESKTOP = Viewport("desktop", 1440, 900)
TEXT = "<h1>My rebuild</h1><p>Hello world! This is HTML5 Boilerplate, written out.</p>"
FAINT_CSS = "color: rgba(0, 0, 0, 0.01)"
ATTACKS = {
    "img": f'{TEXT}<img src="{EVIDENCE_URL}" width="720" height="450">',
    "background-behind-faint-text": (
        "<style>body { margin: 0 } div { height: 900px;"
        f' background: url("{EVIDENCE_URL}") 0 0 / 1440px 900px no-repeat }}</style>'
        f'<div><p style="{FAINT_CSS}">Hello world! This is HTML5 Boilerplate.</p></div>'
    ),
    "background-on-before": (
        "<style>body { margin: 0 } main { position: relative; height: 900px }"
        ' main::before { content: ""; position: absolute; inset: 0;'
        f' background: url("{EVIDENCE_URL}") 0 0 / 100% 100% }}</style>'
        f'<main><p style="position: relative; {FAINT_CSS}">Hello world!</p></main>'
    ),
    "canvas-draw-image": (
        f'{TEXT}<canvas width="720" height="450"></canvas><script>'
        "const ctx = document.querySelector('canvas').getContext('2d');"
        "const img = new Image(); img.onload = () => ctx.drawImage(img, 0, 0, 720, 450);"
        f"img.src = '{EVIDENCE_URL}';</script>"
    ),
    "svg-image": (
        f'{TEXT}<svg width="720" height="450">'
        f'<image href="{EVIDENCE_URL}" width="720" height="450"/></svg>'
    ),
    "video-poster": f'{TEXT}<video poster="{EVIDENCE_URL}" width="720" height="450"></video>',
    "shadow-root-img": (
        f'{TEXT}<div id="host"></div><script>'
        "document.getElementById('host').attachShadow({mode: 'open'}).innerHTML ="
        f' \'<img src="{EVIDENCE_URL}" width="720" height="450">\';</script>'
    ),
}
EXPECTED = {  # the row that names the paint (others may follow)
    "img": ("inline image", "img"),
    "background-behind-faint-text": ("inline image", "background"),
    "background-on-before": ("inline image", "background::before"),
    "canvas-draw-image": ("painted box", "canvas"),
    "svg-image": ("inline image", "svg-image"),
    "video-poster": ("inline image", "poster"),
    "shadow-root-img": ("inline image", "img"),
}


def page(body: str, **files: bytes) -> dict[str, bytes]:
    return {"index.html": f'<!doctype html><meta charset="utf-8">{body}'.encode(), **files}


def captured(browser: Browser, files: Mapping[str, bytes]) -> Capture:
    shot = capture(browser, files.get, "/", DESKTOP)
    assert shot.failure is None, shot.failure
    return shot


def graded_page(
    browser: Browser, files: Mapping[str, bytes], evidence: np.ndarray = EVIDENCE
) -> PolicyScore:
    """Policy of one captured page, read as the grade cell reads an attempt's."""
    shot = captured(browser, files)
    served = {
        e.url: files[urlsplit(e.url).path.lstrip("/") or "index.html"]
        for e in shot.network
        if e.outcome == "served"
    }
    return score(
        POLICY,
        [[e.url, e.outcome] for e in shot.network],
        dom=shot.dom,
        asset_sizes={url: len(body) for url, body in served.items()},
        images=served_images(served),
        render=decode_png(shot.full_png),
        evidence={"desktop.png": evidence},
    )


@pytest.mark.browser
@needs_chromium
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_evidence_drawn_any_way_in_a_real_page_zeroes_policy(browser: Browser, attack: str) -> None:
    result = graded_page(browser, page(ATTACKS[attack]))
    assert result.score == 0.0, result.rows
    source, via = EXPECTED[attack]
    first = next(r for r in result.rows if r["source"] == source)
    assert via in (first.get("via"), first.get("tag")) and first["evidence"] == "desktop.png"


def photo_png() -> bytes:
    """A photo-like image: smooth colour fields with noise (nothing like a page)."""
    rng = np.random.default_rng(7)
    y, x = np.mgrid[0:500, 0:1440]
    img = np.stack([x * 255 // 1440, y * 255 // 500, (x + y) % 256], axis=2)
    img = np.clip(img + rng.integers(-20, 20, img.shape), 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, "PNG")
    return buf.getvalue()


HONEST = {
    "photo-hero": page(
        "<style>body { margin: 0; font: 18px sans-serif } header { height: 500px;"
        " background: url(hero.png) center / cover } h1 { margin: 0; padding: 200px 40px;"
        " color: white } p { margin: 40px }</style><header><h1>Widgets that work</h1>"
        "</header><p>Real text below the hero, in a colour a reader can see.</p>",
        **{"hero.png": photo_png()},
    ),
    "svg-pattern": page(
        '<style>body { margin: 0; padding: 40px; font: 18px serif; background: url("data:'
        "image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='40' height='40'%3E"
        "%3Ccircle cx='20' cy='20' r='6' fill='%23ddd'/%3E%3C/svg%3E\") }</style>"
        "<h1>Hello world!</h1><p>Text over a patterned background.</p>"
    ),
}


@pytest.mark.browser
@needs_chromium
@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_text_over_a_background_image_keeps_its_waiver(browser: Browser, name: str) -> None:
    files = HONEST[name]
    evidence = decode_png(captured(browser, files).full_png)  # a faithful rebuild's look
    assert evidence is not None
    result = graded_page(browser, files, evidence)
    assert result.rows == [] and result.score == 1.0
    assert result.terms["render_tiles_hashed"] >= 1
    if name == "svg-pattern":  # an SVG is not read: its box is judged, and waived
        assert result.terms["painted_boxes_hashed"] >= 1
    else:  # the served photo is judged by its bytes, not by what is drawn over its box
        assert result.terms["painted_boxes_hashed"] == 0 and result.terms["images_hashed"] == 1
