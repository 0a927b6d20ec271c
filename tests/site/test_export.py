"""Unit tests for recon.site: a pure, deterministic, allow-list-only static site."""

from __future__ import annotations

import inspect
import io
import posixpath
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import blake3
import numpy as np
import pytest
from PIL import Image
from pydantic import Field, ValidationError

from recon.errors import HarnessError
from recon.model import (
    AttemptSummary,
    Case,
    CaseScore,
    EntryResult,
    Provenance,
    ReleaseResult,
    Reliability,
    ReliabilityReport,
    Trace,
    load_yaml,
)
from recon.model.contract import Contract
from recon.model.result import PublicCheck
from recon.release.aggregate import _note
from recon.site import PublicCase, allow, brief, build_site, case_facts, points, render
from recon.site.images import image_name

REPO = Path(__file__).resolve().parents[2]

# --- factories -----------------------------------------------------------------------


def png(rgb: tuple[int, int, int], size: tuple[int, int] = (40, 60)) -> bytes:
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
            "responsive": {"value": 1.0, "terms": {"mean": 1.0, "viewports": 3.0}},
        },
        "trace": Trace(turns=12, tool_calls=30, tokens=45000),
        "record": digest(ident),
        "checks": [
            PublicCheck(dimension="functional", label="the counter updates", passed=True),
            PublicCheck(dimension="functional", label="the title is red", passed=False),
            PublicCheck(
                dimension="workflow",
                group="add a todo",
                label="the todo is listed",
                passed=True,
                kept=False,
                screenshot=blake3.blake3(SHOT).hexdigest(),
            ),
        ],
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
        "ci": (0.5, 1.0) if score is not None else None,
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
SHOT = png((10, 200, 10), (30, 20))
ORACLE = png((7, 7, 7), (5, 5))  # a sealed reference capture: never an argument
SEALED_SELECTOR = "#checkout-total-sealed-7f3a"  # lives only in sealed checks
CONTRACT = Contract.model_validate(
    {
        "routes": ["/"],
        "viewports": ["desktop", "mobile"],
        "build": {"command": [], "output": "site"},
    }
)


def case(evidence: dict[str, bytes], brief_md: str = "# Brief\n\nRebuild it.") -> PublicCase:
    facts = {"title": "Home page", "version": 1, "track": "frozen-evidence/reconstruct"}
    return PublicCase(facts=facts, bundle=digest("bundle"), brief=brief_md, contract=CONTRACT,
                      evidence=evidence)  # fmt: skip


Inputs = tuple[ReleaseResult, dict[str, PublicCase], dict[str, dict[str, bytes]], dict[str, bytes]]


def sample() -> Inputs:
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
            checks=[],
        ),
    ]
    result = release(attempts, [entry("alpha", 1, 0.75), entry("beta", None, None)])
    cases = {
        "home": case({"desktop.png": RED, "mobile.png": GREEN}),
        "shop": case({"desktop.png": BLUE}),
    }
    captures = {
        "alpha-home-0": {"root.desktop.default": GREY, "root.mobile.default": GREEN},
        "alpha-home-1": {"root.desktop.default": GREY},
        "alpha-shop-0": {"root.desktop.default": png((200, 100, 0))},
    }
    return result, cases, captures, {blake3.blake3(SHOT).hexdigest(): SHOT}


def html_files(files: dict[str, bytes]) -> dict[str, str]:
    return {p: b.decode("utf-8") for p, b in files.items() if p.endswith(".html")}


# --- determinism and layout ----------------------------------------------------------


def test_identical_inputs_give_identical_bytes_whatever_the_dict_order() -> None:
    result, cases, captures, shots = sample()
    first = build_site(result, cases, captures, shots)
    shuffled_cap = {a: dict(reversed(p.items())) for a, p in reversed(captures.items())}
    second = build_site(result, dict(reversed(cases.items())), shuffled_cap, shots)
    assert first == second
    assert list(first) == sorted(first)


def test_every_page_exists_and_is_linked() -> None:
    result, cases, captures, shots = sample()
    files = build_site(result, cases, captures, shots)
    expected = {"index.html", "reliability.html", "manifest.html", "style.css", "site.js"}
    expected |= {f"runs/{a.id}.html" for a in result.attempts}
    expected |= {"entries/alpha.html", "entries/beta.html", "cases/home.html", "cases/shop.html"}
    assert expected <= files.keys()
    linked = {
        posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        for path, text in html_files(files).items()
        for target in re.findall(r'href="([^"#]+)"', text)
    }
    pages = {p for p in files if p.endswith(".html")}
    assert pages <= linked, sorted(pages - linked)


def test_every_link_is_relative_and_resolves_inside_the_site() -> None:
    result, cases, captures, shots = sample()
    files = build_site(result, cases, captures, shots)
    exported = set(files) | {"data/runs.js", "data/manifest.js", "data/manifest-public.json"}
    for path, text in html_files(files).items():
        for target in re.findall(r'(?:href|src)="([^"]*)"', text):
            assert not re.match(r"^([a-z]+:|/)", target), f"{path}: absolute link {target}"
            resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            assert resolved in exported, f"{path}: broken link {target}"
    for name in ("style.css", "site.js"):
        assert not re.search(r"https?:|//[a-z]", files[name].decode().replace("://", "")), name
        assert b"http" not in files[name] and b"@import" not in files[name]


# --- sealed boundary -----------------------------------------------------------------


def test_images_are_the_allowed_ones_under_keyed_names() -> None:
    result, cases, captures, shots = sample()
    files = build_site(result, cases, captures, shots)
    images = {p for p in files if p.startswith("img/")}
    for path in images:
        assert path == image_name(files[path])
        assert blake3.blake3(files[path]).hexdigest() not in b"".join(files.values()).decode(
            "latin-1"
        )  # no image's plain content digest is printed anywhere
    shown = {files[p] for p in images}
    public = {RED, GREEN, BLUE, GREY, SHOT, png((200, 100, 0))}
    assert public <= shown  # the heatmaps are the rest
    assert (
        len(shown - public) == 3
    )  # heatmaps: home desktop (shared by two runs), home mobile, shop
    assert ORACLE not in shown


def test_nothing_sealed_can_reach_the_site() -> None:
    params = list(inspect.signature(build_site).parameters)
    # transcripts: a gateway attempt's calls, read from its recording (the agent's, which
    # never saw sealed material), without timings (tests/site/test_transcript.py)
    assert params == ["result", "cases", "captures", "shots", "transcripts"]
    with pytest.raises(ValidationError):
        AttemptSummary.model_validate(
            attempt("x", "alpha", "home").model_dump() | {"selectors": [SEALED_SELECTOR]}
        )
    with pytest.raises(ValidationError):
        PublicCheck.model_validate({"dimension": "functional", "label": "x", "passed": True,
                                    "observed": SEALED_SELECTOR})  # fmt: skip
    result, cases, captures, shots = sample()
    blob = b"".join(build_site(result, cases, captures, shots).values())
    assert SEALED_SELECTOR.encode() not in blob
    assert ORACLE not in blob
    assert blake3.blake3(ORACLE).hexdigest().encode() not in blob


def test_the_allow_list_fails_closed_and_names_real_fields() -> None:
    for model, fields in allow.EXPORTED.items():
        assert set(fields) <= set(model.model_fields), model.__name__

    class Sealed(AttemptSummary):
        weights: dict[str, float] = Field(default_factory=dict)

    leaky = Sealed(**attempt("x", "a", "home").model_dump(), weights={"functional": 0.35})
    with pytest.raises(HarnessError, match="not in the export allow-list"):
        allow.public(leaky)
    assert "weights" not in allow.public(attempt("x", "a", "home"))
    with pytest.raises(HarnessError, match="cannot be exported"):
        allow.public({"x": object()})


def test_rejects_non_image_bytes_and_unsafe_ids() -> None:
    result, cases, captures, shots = sample()
    bad = captures | {"alpha-home-0": {"root.desktop.default": b"x"}}
    with pytest.raises(HarnessError, match=r"capture alpha-home-0/root\.desktop\.default"):
        build_site(result, cases, bad, shots)
    escape = release([attempt("../escape", "alpha", "home")], [entry("alpha", 1, 0.5)])
    with pytest.raises(HarnessError, match="cannot name a page"):
        build_site(escape, {}, {}, {})
    twins = release(
        [attempt("Run-1", "alpha", "home"), attempt("run-1", "alpha", "home", 1)],
        [entry("alpha", 1, 0.5)],
    )
    with pytest.raises(HarnessError, match="collide"):
        build_site(twins, {}, {}, {})


# --- content ---------------------------------------------------------------------------


def test_hostile_strings_are_escaped_everywhere() -> None:
    hostile = '<script>alert("x")</script>'
    result = release(
        [attempt("a-0", "alpha", "home", reason=f'"><img src=x onerror=alert(1)>{hostile}')],
        [entry("alpha", 1, 0.5, model=hostile, agent="a&b")],
        title=f"Title {hostile}",
        formal_note=hostile,
    )
    files = build_site(result, {"home": case({}, f"# {hostile}\n\n- **{hostile}**")}, {}, {})
    for path, text in html_files(files).items():
        assert "<script>alert" not in text, path
        assert "onerror=alert(1)>" not in text, path
    index = files["index.html"].decode()
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in index
    assert "a&amp;b" in index
    assert "&lt;img src=x onerror=alert(1)&gt;" in files["runs/a-0.html"].decode()
    assert "<strong>&lt;script&gt;" in files["cases/home.html"].decode()


def test_numbers_are_fixed_format() -> None:
    result, cases, captures, shots = sample()
    files = build_site(result, cases, captures, shots)
    index = files["index.html"].decode()
    assert "<strong>0.7500</strong>" in index and "0.5000–1.0000" in index
    run = files["runs/alpha-home-0.html"].decode()
    assert ">0.8000<" in run and ">1.0000<" in run and ">0.7500<" in run  # values, total
    assert "mean 1.0000, viewports 3" in run  # a score term, a count term
    assert "45,000" in run and "25.0%" in files["reliability.html"].decode()
    for path, text in html_files(files).items():  # no bare or short-form score anywhere
        shown = re.sub(r"<[^>]+>", " ", text)
        assert not re.search(r"(?<![\d.\w-])[01]\.\d{1,3}(?!\d)", shown), path


def test_leaderboard_sections_whisker_bars_and_filters() -> None:
    result, cases, captures, shots = sample()
    index = build_site(result, cases, captures, shots)["index.html"].decode()
    ranked, unranked = index.split('<section id="unranked">')
    assert ">alpha<" in ranked and ">beta<" not in ranked and ">beta<" in unranked
    assert index.count('class="whisker"') == 2 and index.count('class="minibars"') == 2
    assert 'data-agent="alpha-agent"' in index and 'id="filter-condition"' in index
    assert 'class="banner formal"' in index and "all attempts ran in the docker backend" in index
    informal = release(result.attempts, result.entries, formal=False, formal_note="native")
    page = build_site(informal, {}, {}, {})["index.html"].decode()
    assert 'class="banner informal"' in page


@pytest.mark.parametrize("formal", [True, False])
def test_the_banner_does_not_repeat_its_label(formal: bool) -> None:
    """The aggregate's notes open with the label ("Formal release: …"); the banner says it once."""
    result, *_ = sample()
    protocol = SimpleNamespace(formal=formal, name="p-native", backend="native")
    note = _note(SimpleNamespace(protocol=protocol))  # type: ignore[arg-type]
    page = build_site(
        release(result.attempts, result.entries, formal=formal, formal_note=note), {}, {}, {}
    )
    banner = re.search(r'<div class="banner[^"]*">(.*?)</div>', page["index.html"].decode(), re.S)
    assert banner is not None
    text = " ".join(re.sub(r"<[^>]+>", "", banner.group(1)).split())
    label = "Formal release" if formal else "Non-formal"
    assert text == note and text.startswith(f"{label}:") and text.count(label) == 1, text


def test_run_page_shows_checks_by_label_values_terms_and_heatmaps() -> None:
    result, cases, captures, shots = sample()
    page = build_site(result, cases, captures, shots)["runs/alpha-home-0.html"].decode()
    assert '<span class="pass">pass</span> the counter updates' in page
    assert '<span class="fail">fail</span> the title is red' in page
    assert "Workflow: add a todo" in page and image_name(SHOT) in page
    assert 'after reload or navigation: <span class="fail">fail</span>' in page
    assert "sealed weights" in page and "weight</" not in page and "product" not in page
    srcs = re.findall(r'<img[^>]+src="\.\./(img/[0-9a-f]{32}\.png)"', page)
    assert srcs[1:4] == [image_name(RED), image_name(GREY), srcs[3]]  # evidence, capture, heat
    failed = build_site(result, cases, captures, shots)["runs/beta-home-0.html"].decode()
    assert "harness failure" in failed and "browser crashed" in failed
    assert "No checks were graded" in failed


def test_case_page_shows_brief_evidence_per_point_and_distribution() -> None:
    result, cases, captures, shots = sample()
    page = build_site(result, cases, captures, shots)["cases/home.html"].decode()
    assert "<h3>Brief</h3>" in page and "Rebuild it." in page
    assert page.count('class="strip"') == 2 and image_name(GREEN) in page
    assert "<strong>/</strong> · mobile 390×844 · default" in page
    assert digest("bundle") in page


def test_case_page_shows_motion_and_only_the_attribution_of_provenance() -> None:
    frames = [Image.new("RGB", (20, 10), c) for c in ((255, 0, 0), (0, 0, 255))]
    out = io.BytesIO()
    frames[0].save(out, format="WEBP", save_all=True, append_images=frames[1:], duration=100)
    webp = out.getvalue()
    folder = REPO / "cases" / "todomvc"
    provenance = load_yaml(Provenance, folder / "provenance.yaml")
    facts = case_facts(load_yaml(Case, folder / "case.yaml"), provenance)
    assert set(facts["provenance"]) == {"publisher", "package", "version", "registry",
                                        "license", "packages"}  # fmt: skip
    assert facts["files"] == {"authored": 2, "copied": 2}
    result, cases, captures, shots = sample()
    home = PublicCase(facts=facts, bundle=digest("b"), contract=CONTRACT,
                      evidence={"desktop.png": RED, "motion/open.webp": webp})  # fmt: skip
    page = build_site(result, cases | {"home": home}, captures, shots)["cases/home.html"]
    text = page.decode()
    assert image_name(webp) in text and image_name(webp).endswith(".webp")
    assert "TasteJS (TodoMVC project)" in text and "todomvc-app-css@2.4.3" in text
    assert "CC-BY-4.0" in text and "2 were authored for ReconBench" in text
    for artifact in provenance.artifacts:  # sealed paths and digests stay out
        assert artifact.blake3 not in text and artifact.path not in text
    assert provenance.notes[:40] not in text and provenance.tarball_integrity not in text


def test_state_points_pair_with_state_evidence_only() -> None:
    names = ["desktop.png", "desktop--menu-open.png", "mobile.png", "motion/open.webp"]
    assert points.pairs(dict.fromkeys(names, b""), dict.fromkeys(
        ["root.desktop.default", "root.desktop.menu-open", "root.mobile.menu-open",
         "about.html.mobile.default"], b""
    )) == [
        (None, "about.html.mobile.default"),  # evidence is of route / only
        ("desktop.png", "root.desktop.default"),
        ("desktop--menu-open.png", "root.desktop.menu-open"),
        (None, "root.mobile.menu-open"),  # no state evidence: never the default still
        ("mobile.png", None),
    ]  # fmt: skip
    assert points.motion(dict.fromkeys(names, b"")) == ["motion/open.webp"]


def test_brief_markup_is_escaped_and_its_subset_rendered() -> None:
    out = str(brief.render("# Title\n\nA `x<y` and **bold**\n\n- one\n  more\n- two &lt;b&gt;"))
    assert out == (
        "<h3>Title</h3>\n<p>A <code>x&lt;y</code> and <strong>bold</strong></p>\n"
        "<ul><li>one more</li><li>two &lt;b&gt;</li></ul>"
    )


def test_filters_have_one_format_each() -> None:
    assert (render.score(1.0), render.score(0.65614), render.score(None)) == (
        "1.0000",
        "0.6561",
        "—",
    )
    assert render.interval((0.2, 1.0)) == "0.2000–1.0000" and render.pct(0.25) == "25.0%"
    assert render.delta(-0.31224) == "−0.3122" and render.delta(0.0011) == "+0.0011"
    assert render.count(45000) == "45,000" and render.fixed(1.0, 2) == "1.00"


def test_heatmap_is_empty_for_equal_pages_and_marks_a_moved_block() -> None:
    from recon.grade._ssim import mean_ssim, ssim_map
    from recon.site.heatmap import align, dissimilarity, luma

    rng = np.random.default_rng(0)
    page = np.full((300, 400, 3), 255, np.uint8)
    page[40:120, 60:200] = rng.integers(0, 255, (80, 140, 3), dtype=np.uint8)
    assert dissimilarity(page, page).sum() == 0.0
    moved = np.full_like(page, 255)
    moved[140:220, 160:300] = page[40:120, 60:200]
    heat = dissimilarity(page, moved)
    inside = heat[34:226, 54:306].sum()  # both boxes, with the 7x7 window's reach
    assert inside / heat.sum() > 0.99 and heat[250:, :].sum() == 0.0
    narrow = dissimilarity(page, moved[:200, :300])  # aligned: cropped/padded, never resized
    assert narrow.shape == (300, 400)
    x, y = (luma(p) for p in align(page, moved))  # the grader's own windows, not a copy
    assert abs(ssim_map(x, y, 1000).mean() - mean_ssim(x, y, 1000)) < 1e-12
