"""The ladder variants (recon.curate.ladder) alter the element the grader scores, and
every defect changes its region; one that changes nothing is an error."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Browser

from recon.curate import ladder
from recon.curate.ladder import LadderError
from recon.grade.regional import resolve_regions
from recon.model import load_yaml
from recon.model.grading import DIMENSIONS, Grading, Region
from recon.render import Viewport
from recon.render.capture import capture
from tests.conftest import suite_cases

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
CASES = [REPO / "cases" / case for case in suite_cases()]  # RECON_FULL_SUITE=1: all
ANSWERS = REPO / "entries" / "scripted" / "answers"
DESKTOP = Viewport("desktop", 1440, 900)


_BUILT: dict[Path, tuple[Grading, ladder.Ladder]] = {}


def _build(browser: Browser, case: Path) -> tuple[Grading, ladder.Ladder]:
    """The case's ladder, built once per test run (it renders every defect)."""
    if case not in _BUILT:
        grading = load_yaml(Grading, case / "sealed" / "grading.yaml")
        _BUILT[case] = (
            grading,
            ladder.build(case, grading, browser, answer=ANSWERS / case.name / "faithful"),
        )
    return _BUILT[case]


def _page(tree: ladder.Tree) -> str:
    return tree[ladder.PAGE].decode("utf-8")


def _render(browser: Browser, tree: ladder.Tree) -> tuple[np.ndarray, list[dict[str, Any]]]:
    shot = capture(browser, tree.get, "/", DESKTOP)
    image = np.asarray(Image.open(io.BytesIO(shot.full_png)).convert("RGB"))
    return image, shot.dom


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_ladder_and_grader_agree_and_every_defect_changes_the_region(
    browser: Browser, case: Path
) -> None:
    grading, built = _build(browser, case)  # verifies every defect (MIN_CHANGED_PX)
    trees, target = built.trees, built.target
    assert list(trees) == [*ladder.LADDER, *ladder.CHEATS]
    assert trees["reference"] == ladder.read_tree(case / "sealed" / "reference")
    pages = {name: _page(tree) for name, tree in trees.items()}
    protected = grading.preservation.assertions or grading.preservation.regions
    if protected and pages["faithful"] == pages["reference"]:
        pages.pop("faithful")  # a perfect repair of the starter restores the reference's page
    assert len(set(pages.values())) == len(pages), "two variants serve the same page"

    region = ladder.target_region(grading)
    assert region.weight == max(r.weight for r in grading.regions) and target.region == region
    _, dom = _render(browser, trees["reference"])  # the oracle's capture of the reference
    assert resolve_regions([region], dom).boxes[region.id] == target.box  # the grader's box
    changed = built.changed
    print(f"\n{case.name}: {region.id} {list(target.box)} {target.path}: changed {changed}")
    area = target.box[2] * target.box[3]
    assert changed["recoloured"] >= area // 2  # the region's own background, repainted
    assert all(n >= ladder.MIN_CHANGED_PX for n in changed.values())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_defects_inject_a_stylesheet_or_a_remover_naming_the_target(
    browser: Browser, case: Path
) -> None:
    _, built = _build(browser, case)
    trees, target = built.trees, built.target
    assert target.path.startswith("html > body:nth-of-type(1) > ")
    for name in ("recoloured", "shifted"):
        assert f"{target.path} {{" in _page(trees[name])
    assert ladder.RECOLOUR_BACKGROUND in _page(trees["recoloured"])
    shifted = _page(trees["shifted"])  # cumulative: the recolour stays, the move is added
    assert ladder.RECOLOUR_BACKGROUND in shifted and "translate(10vw, 10vh)" in shifted
    assert "translate(" not in _page(trees["recoloured"])
    missing = _page(trees["missing"])
    assert ladder.remover_script(target) in missing and "<style" not in missing.replace(
        _page(trees["reference"]), ""
    )
    for name in ladder.DEFECTS:
        assert set(trees[name]) == set(trees["reference"])  # only the page changes


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cheats_serve_the_desktop_evidence(case: Path) -> None:
    reference = ladder.read_tree(case / "sealed" / "reference")
    evidence = (case / "public" / "evidence" / "desktop.png").read_bytes()
    width, height = ladder.png_size(evidence)
    assert width == 1440 and height >= 1
    background = ladder.evidence_background(reference, evidence)
    assert background[ladder.EVIDENCE_ASSET] == evidence
    assert f"url('{ladder.EVIDENCE_ASSET}')" in _page(background)
    assert f"min-height: {height}px" in _page(background)
    assert "visibility: hidden" in _page(background)
    image = ladder.image_only(reference, evidence)
    assert image[ladder.EVIDENCE_ASSET] == evidence
    assert f'<img id="{ladder.SHOT_ID}" src="{ladder.EVIDENCE_ASSET}"' in _page(image)
    assert "display: none" in _page(image)


def test_the_cheats_cover_every_route_each_with_its_own_still() -> None:
    """clean-blog serves four routes: a cheat that replaced only ``/`` would leave three
    pages byte-identical to the reference, with their full credit (issue 28 item 6)."""
    case = REPO / "cases" / "clean-blog"
    reference = ladder.read_tree(case / "sealed" / "reference")
    routes = ["/", "/about.html", "/post.html", "/contact.html"]
    stills = ladder.route_stills(case, routes, reference)
    evidence = case / "public" / "evidence"
    assert list(stills) == ["index.html", "about.html", "post.html", "contact.html"]
    assert stills["about.html"] == (evidence / "about.html" / "desktop.png").read_bytes()
    assert stills["index.html"] == (evidence / "desktop.png").read_bytes()
    assert len(set(stills.values())) == 4  # each route its own still
    for cheat in (ladder.evidence_background, ladder.image_only):
        tree = cheat(reference, stills)
        for page, png in stills.items():
            asset, url = ladder.evidence_asset(page)
            assert tree[page] != reference[page] and url in tree[page].decode(), (cheat, page)
            assert tree[asset] == png
        untouched = set(reference) - set(stills)
        assert all(tree[path] == reference[path] for path in untouched)
    assert ladder.evidence_asset("docs/index.html")[1].startswith("../recon-ladder/")
    with pytest.raises(LadderError, match=r"route /nowhere\.html: the reference has no page"):
        ladder.route_stills(case, ["/nowhere.html"], reference)


def test_blank_has_no_content_and_faithful_is_not_a_copy() -> None:
    assert "<body></body>" in _page(ladder.blank())
    case = REPO / "cases" / "todomvc"
    reference = ladder.read_tree(case / "sealed" / "reference")
    shared = set(ladder.read_tree(ANSWERS / case.name / "faithful").items()) & set(
        reference.items()
    )
    assert not shared, "the faithful answer copies reference files byte for byte"


def test_regions_the_ladder_cannot_target_are_refused(browser: Browser) -> None:
    page = {"index.html": b"<p>Hi</p>"}
    with pytest.raises(LadderError, match="box region"):
        ladder.resolve_target(browser, page, Region(id="r", box=(0, 0, 10, 10)))
    with pytest.raises(LadderError, match="uses syntax a DOM snapshot cannot answer"):
        ladder.resolve_target(browser, page, Region(id="r", selector=".class"))
    with pytest.raises(LadderError, match="no regions"):
        ladder.target_region(
            Grading(weights={**dict.fromkeys(DIMENSIONS, 0.0), "global_visual": 1.0})
        )
    with pytest.raises(ValueError, match="not a PNG"):
        ladder.png_size(b"GIF89a")


# An image region, named with chromium's role (the old ladder spelled it ARIA's `img`) -----


def _png(opaque: bool) -> bytes:
    img = Image.new("RGBA", (160, 80), (255, 255, 255, 255 if opaque else 0))
    img.paste((30, 60, 200, 255), (20, 20, 140, 60))
    out = io.BytesIO()
    img.save(out, format="PNG")
    return out.getvalue()


def _logo_page(opaque: bool) -> ladder.Tree:
    html = (
        '<!doctype html><html><head><meta charset="utf-8"></head><body>'
        '<h1>Acme</h1><img src="logo.png" alt="Acme logo" width="160" height="80">'
        "<p>Widgets since 1999.</p></body></html>"
    )
    return {"index.html": html.encode(), "logo.png": _png(opaque)}


def test_an_image_region_resolves_alike_in_grader_and_ladder(browser: Browser) -> None:
    tree = _logo_page(opaque=False)
    region = Region(id="logo", selector="img[role=image]")
    _, dom = _render(browser, tree)
    graded = resolve_regions([region], dom)
    assert graded.problems == ()
    target = ladder.resolve_target(browser, tree, region)
    assert target.box == graded.boxes["logo"] and target.path.endswith("img:nth-of-type(1)")
    for make in (ladder.recoloured, ladder.shifted, ladder.missing):
        assert ladder.measure(browser, tree, make(tree, target), target) >= ladder.MIN_CHANGED_PX

    aria = Region(id="logo", selector="img[role=img]")  # ARIA's spelling is not chromium's
    (problem,) = resolve_regions([aria], dom).problems
    with pytest.raises(LadderError) as refused:
        ladder.resolve_target(browser, tree, aria)
    assert problem.endswith(str(refused.value).removeprefix("region logo: "))


def test_a_defect_that_changes_nothing_is_an_error(browser: Browser) -> None:
    tree = _logo_page(opaque=True)  # an opaque image hides any background put behind it
    target = ladder.resolve_target(browser, tree, Region(id="logo", selector="img"))
    changed = ladder.measure(browser, tree, ladder.recoloured(tree, target), target)
    assert changed == 0
    with pytest.raises(LadderError, match=r"ladder step 'recoloured' changes 0 pixel\(s\)"):
        ladder.require_change("recoloured", target, changed)


def test_rendered_variants_show_their_defect(browser: Browser) -> None:
    case = REPO / "cases" / "todomvc"
    grading, built = _build(browser, case)
    trees = built.trees
    region = ladder.target_region(grading)
    assert region.selector == 'ul[aria-label="Todo list"]'
    reference, ref_dom = _render(browser, trees["reference"])
    names = {e.get("name") for e in ref_dom} | {e.get("text") for e in ref_dom}
    assert "Todo list" in names and "Pin the evidence" in names

    recoloured, _ = _render(browser, trees["recoloured"])
    green = np.all(recoloured == (0, 200, 40), axis=2)
    assert green.sum() > 10_000 and not np.all(reference == (0, 200, 40), axis=2).any()

    def box(dom: list[dict[str, Any]], name: str) -> list[int]:
        return list(next(e["box"] for e in dom if e.get("name") == name))

    _, shifted_dom = _render(browser, trees["shifted"])
    ref_box, new_box = box(ref_dom, "Todo list"), box(shifted_dom, "Todo list")
    assert (new_box[0] - ref_box[0], new_box[1] - ref_box[1]) == (144, 90)  # 10vw, 10vh

    _, missing_dom = _render(browser, trees["missing"])
    left = {e.get("name") for e in missing_dom} | {e.get("text") for e in missing_dom}
    assert "Todo list" not in left and "Pin the evidence" not in left
    assert "todos" in left  # only the region went

    blank, _ = _render(browser, trees["blank"])
    assert np.all(blank == 255)

    evidence = np.asarray(Image.open(case / "public/evidence/desktop.png").convert("RGB"))
    for cheat in ladder.CHEATS:
        shown, _ = _render(browser, trees[cheat])
        assert shown.shape == evidence.shape
        assert np.abs(shown.astype(int) - evidence).mean() < 1.0, cheat
