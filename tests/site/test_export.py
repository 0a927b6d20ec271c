"""Unit tests for recon.site.export: a pure, deterministic, whitelist-only static site."""

from __future__ import annotations

import inspect
import io
import posixpath
import re
from typing import Any

import blake3
import pytest
from PIL import Image
from pydantic import ValidationError

from recon.errors import HarnessError
from recon.model import (
    AttemptSummary,
    CaseScore,
    EntryResult,
    ReleaseResult,
    Reliability,
    ReliabilityReport,
    Trace,
)
from recon.site import _run, build_site

# --- factories -----------------------------------------------------------------------


def png(rgb: tuple[int, int, int], size: tuple[int, int] = (4, 6)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, rgb).save(out, format="PNG")
    return out.getvalue()


def digest(label: str) -> str:
    return blake3.blake3(label.encode()).hexdigest()


def attempt(ident: str, entry: str, case: str, index: int = 0, **over: Any) -> AttemptSummary:
    fields: dict[str, Any] = {
        "id": ident,
        "entry": entry,
        "case": case,
        "index": index,
        "outcome": "valid",
        "reason": "built and graded",
        "formal": True,
        "total": 0.75,
        "dimensions": {
            "global_visual": {"value": 0.8, "terms": {"points": 2.0, "failed": 0.0}},
            "functional": {"value": 0.7, "terms": {"assertions": 10.0}},
        },
        "trace": Trace(turns=12, tool_calls=30, tokens=45000),
        "record": digest(ident),
    }
    return AttemptSummary(**(fields | over))


def entry(name: str, rank: int | None, score: float | None, **over: Any) -> EntryResult:
    fields: dict[str, Any] = {
        "entry": name,
        "model": f"{name}-model",
        "agent": f"{name}-agent",
        "rank": rank,
        "ranked": rank is not None,
        "score": score,
        "covered": 2 if rank is not None else 1,
        "cases": [
            CaseScore(case="home", attempts={"valid": 2}, valid=2, mean=score, per_attempt=[score]),
        ],
    }
    return EntryResult(**(fields | over))


def release(
    attempts: list[AttemptSummary], entries: list[EntryResult], **over: Any
) -> ReleaseResult:
    fields: dict[str, Any] = {
        "release": "2025q1",
        "title": "ReconBench 2025 Q1",
        "protocol": "std",
        "formal": True,
        "formal_note": "all attempts ran in the docker backend",
        "aggregation": "case-mean-v1",
        "active_cases": ["home", "shop"],
        "entries": entries,
        "attempts": attempts,
        "reliability": ReliabilityReport(
            overall=Reliability(
                attempts=len(attempts),
                by_outcome={"valid": len(attempts) - 1, "harness_failure": 1},
                harness_failure_rate=0.25,
            )
        ),
    }
    return ReleaseResult(**(fields | over))


RED, GREEN, BLUE, GREY = png((255, 0, 0)), png((0, 255, 0)), png((0, 0, 255)), png((90, 90, 90))
ORACLE = png((7, 7, 7), (5, 5))  # a sealed reference capture: never an argument
SEALED_SELECTOR = "#checkout-total-sealed-7f3a"  # lives only in sealed checks


def sample() -> tuple[ReleaseResult, dict[str, dict[str, bytes]], dict[str, dict[str, bytes]]]:
    attempts = [
        attempt("alpha-home-0", "alpha", "home"),
        attempt("alpha-home-1", "alpha", "home", 1),
        attempt("alpha-shop-0", "alpha", "shop"),
        attempt(
            "beta-home-0",
            "beta",
            "home",
            outcome="harness_failure",
            reason="browser crashed",
            total=None,
            dimensions={},
        ),
    ]
    result = release(attempts, [entry("alpha", 1, 0.75), entry("beta", None, None)])
    evidence = {
        "home": {"desktop.png": RED, "mobile.png": GREEN, "brief.md": b"# public brief"},
        "shop": {"desktop.png": BLUE},
        "unused-case": {"desktop.png": png((1, 2, 3))},
    }
    captures = {
        "alpha-home-0": {"root.desktop.default": GREY, "root.mobile.default": GREEN},
        "alpha-home-1": {"root.desktop.default": GREY},
        "alpha-shop-0": {"root.desktop.default": png((200, 100, 0))},
    }
    return result, evidence, captures


def html_files(files: dict[str, bytes]) -> dict[str, str]:
    return {p: b.decode("utf-8") for p, b in files.items() if p.endswith(".html")}


# --- determinism and layout ----------------------------------------------------------


def test_identical_inputs_give_identical_bytes_whatever_the_dict_order() -> None:
    result, evidence, captures = sample()
    first = build_site(result, evidence, captures)
    shuffled_ev = {c: dict(reversed(f.items())) for c, f in reversed(evidence.items())}
    shuffled_cap = {a: dict(reversed(p.items())) for a, p in reversed(captures.items())}
    second = build_site(result, shuffled_ev, shuffled_cap)
    assert first == second
    assert list(first) == sorted(first)


def test_every_attempt_has_a_run_page_linked_from_the_index() -> None:
    result, evidence, captures = sample()
    files = build_site(result, evidence, captures)
    runs = {p for p in files if p.startswith("runs/")}
    assert runs == {f"runs/{a.id}.html" for a in result.attempts}
    index = files["index.html"].decode()
    for a in result.attempts:
        assert f'href="runs/{a.id}.html"' in index
    assert {"index.html", "style.css"} <= files.keys()


def test_every_link_is_relative_and_resolves_inside_the_site() -> None:
    result, evidence, captures = sample()
    files = build_site(result, evidence, captures)
    for path, text in html_files(files).items():
        for target in re.findall(r'(?:href|src)="([^"]*)"', text):
            assert not re.match(r"^([a-z]+:|/)", target), f"{path}: absolute link {target}"
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            assert resolved in files, f"{path}: broken link {target}"
    assert "http://" not in files["style.css"].decode()


# --- sealed boundary -----------------------------------------------------------------


def test_images_are_exactly_the_whitelisted_pngs_deduplicated() -> None:
    result, evidence, captures = sample()
    files = build_site(result, evidence, captures)
    images = {p for p in files if p.startswith("img/")}
    attempted = {a.case for a in result.attempts}
    allowed = [
        data
        for case, named in evidence.items()
        if case in attempted
        for name, data in named.items()
        if name.endswith(".png")
    ] + [data for points in captures.values() for data in points.values()]
    assert images == {f"img/{blake3.blake3(d).hexdigest()}.png" for d in allowed}
    assert len(images) < len(allowed)  # GREY and GREEN appear twice, stored once
    for path in images:
        assert path == f"img/{blake3.blake3(files[path]).hexdigest()}.png"
    assert set(files) == images | {p for p in files if p.endswith((".html", ".css"))}


def test_nothing_sealed_can_reach_the_site() -> None:
    params = list(inspect.signature(build_site).parameters)
    assert params == ["result", "evidence", "captures"]
    # the public record refuses sealed fields, so they cannot ride along inside it
    with pytest.raises(ValidationError):
        AttemptSummary.model_validate(
            attempt("x", "alpha", "home").model_dump() | {"selectors": [SEALED_SELECTOR]}
        )
    with pytest.raises(ValidationError):
        ReleaseResult.model_validate(sample()[0].model_dump() | {"thresholds": {"ssim": 0.9}})
    result, evidence, captures = sample()
    blob = b"".join(build_site(result, evidence, captures).values())
    assert SEALED_SELECTOR.encode() not in blob
    assert ORACLE not in blob
    assert blake3.blake3(ORACLE).hexdigest().encode() not in blob
    assert b"# public brief" not in blob  # only PNG evidence is published


def test_rejects_non_png_images_and_unsafe_attempt_ids() -> None:
    result, evidence, captures = sample()
    with pytest.raises(HarnessError, match=r"capture alpha-home-0/root\.desktop\.default"):
        build_site(result, evidence, captures | {"alpha-home-0": {"root.desktop.default": b"x"}})
    bad = release([attempt("../escape", "alpha", "home")], [entry("alpha", 1, 0.5)])
    with pytest.raises(HarnessError, match="cannot name a page"):
        build_site(bad, {}, {})
    twins = release(
        [attempt("Run-1", "alpha", "home"), attempt("run-1", "alpha", "home", 1)],
        [entry("alpha", 1, 0.5)],
    )
    with pytest.raises(HarnessError, match="collide"):
        build_site(twins, {}, {})


# --- content ---------------------------------------------------------------------------


def test_hostile_strings_are_escaped_everywhere() -> None:
    hostile = '<script>alert("x")</script>'
    result = release(
        [attempt("a-0", "alpha", "home", reason=f'"><img src=x onerror=alert(1)>{hostile}')],
        [entry("alpha", 1, 0.5, model=hostile, agent="a&b"), entry(hostile, 2, 0.4)],
        title=f"Title {hostile}",
        formal_note=hostile,
    )
    files = build_site(result, {}, {})
    for path, text in html_files(files).items():
        assert "<script" not in text, path
        assert "onerror=alert(1)>" not in text, path
    index = files["index.html"].decode()
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in index
    assert "a&amp;b" in index
    assert index.count("&lt;script&gt;") >= 5  # title, h1, banner, leaderboard, chart, per-case
    assert "&lt;img src=x onerror=alert(1)&gt;" in files["runs/a-0.html"].decode()


def test_index_shows_banner_leaderboard_chart_and_reliability() -> None:
    result, evidence, captures = sample()
    index = build_site(result, evidence, captures)["index.html"].decode()
    assert 'class="banner formal"' in index
    assert "all attempts ran in the docker backend" in index
    assert "unranked: covers 1 of 2 active cases" in index
    assert index.index(">alpha<") < index.index(">beta<")
    assert index.count("<svg") == 1 and index.count('class="bar"') == 1  # beta has no score
    assert "harness_failure" in index and "25.0%" in index
    assert "0.750 (2/2 valid)" in index
    informal = release(result.attempts, result.entries, formal=False, formal_note="native run")
    assert 'class="banner informal"' in build_site(informal, {}, {})["index.html"].decode()


def test_run_page_shows_outcome_trace_dimension_values_terms_and_total() -> None:
    result = release([attempt("a-0", "alpha", "home")], [entry("alpha", 1, 0.5)])
    page = build_site(result, {}, {})["runs/a-0.html"].decode()
    dims = page.split("<h2>Dimensions</h2>")[1]
    assert re.findall(r"<th>([^<]*)</th>", dims)[:3] == ["dimension", "value", "terms"]
    assert "<td>functional</td><td>0.700</td><td>assertions 10</td>" in dims
    assert "<td>global_visual</td><td>0.800</td><td>failed 0, points 2</td>" in dims
    assert "<strong>0.750</strong>" in dims  # the total
    assert "sealed weights" in dims
    assert "Arithmetic" not in page and "product" not in page and "weight</" not in page
    assert "<td>45000</td>" in page and "<td>30</td>" in page
    failed = build_site(*sample()[:1], {}, {})["runs/beta-home-0.html"].decode()
    assert "harness_failure" in failed and "browser crashed" in failed


def test_evidence_sits_beside_the_matching_capture() -> None:
    result, evidence, captures = sample()
    page = build_site(result, evidence, captures)["runs/alpha-home-0.html"].decode()
    srcs = re.findall(r'<img src="\.\./img/([0-9a-f]{64})\.png"', page)
    name = {blake3.blake3(d).hexdigest(): d for d in (RED, GREEN, GREY)}
    assert [name[s] for s in srcs] == [RED, GREY, GREEN, GREEN]  # desktop pair, mobile pair
    single = build_site(result, evidence, captures)["runs/alpha-home-1.html"].decode()
    assert "mobile.png (no capture)" in single


def test_state_points_pair_with_state_evidence_only() -> None:
    names = ["desktop.png", "desktop--menu-open.png", "mobile.png"]
    assert _run.pairs(dict.fromkeys(names, b""), dict.fromkeys(
        ["root.desktop.default", "root.desktop.menu-open", "root.mobile.menu-open",
         "about.html.mobile.default"], b""
    )) == [
        (None, "about.html.mobile.default"),  # evidence is of route / only
        ("desktop.png", "root.desktop.default"),
        ("desktop--menu-open.png", "root.desktop.menu-open"),
        (None, "root.mobile.menu-open"),  # no state evidence: never the default still
        ("mobile.png", None),
    ]  # fmt: skip
