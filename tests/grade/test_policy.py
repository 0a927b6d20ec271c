"""Unit tests for recon.grade.policy, including the evidence-as-imagery cheats."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from recon.grade import policy as policy_module
from recon.grade.policy import PolicyScore, score
from recon.model.grading import Policy
from tests.grade.synthetic import draw, el, landing

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
    assert kinds(result) == ["evidence_as_imagery"] and result.score == 0.0
    assert result.rows[0]["image_cover"] == 1.0 and result.rows[0]["text_elements"] == 1


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
