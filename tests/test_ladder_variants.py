"""The ladder variants (tests/ladder.py) differ from the reference in the intended way."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Browser

from recon.model import load_yaml
from recon.model.grading import Grading, Region
from tests import ladder

REPO = Path(__file__).resolve().parent.parent
CASES = sorted(p.parent.parent for p in (REPO / "cases").glob("*/sealed/grading.yaml"))


def _variants(case: Path) -> tuple[Grading, dict[str, ladder.Tree]]:
    grading = load_yaml(Grading, case / "sealed" / "grading.yaml")
    return grading, ladder.variants(case, grading)


def _page(tree: ladder.Tree) -> str:
    return tree[ladder.PAGE].decode("utf-8")


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_variant_is_generated_and_distinct(case: Path) -> None:
    _, trees = _variants(case)
    assert list(trees) == [*ladder.LADDER, *ladder.CHEATS]
    assert trees["reference"] == ladder.read_tree(case / "sealed" / "reference")
    pages = {name: _page(tree) for name, tree in trees.items()}
    assert len(set(pages.values())) == len(pages), "two variants serve the same page"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_defects_inject_their_stylesheet_and_finder(case: Path) -> None:
    grading, trees = _variants(case)
    region = ladder.target_region(grading)
    assert region.weight == max(r.weight for r in grading.regions)
    reference = _page(trees["reference"])
    for name in ("recoloured", "shifted", "missing"):
        page = _page(trees[name])
        assert ladder.finder_script(region, remove=name == "missing") in page
        assert page.index('id="recon-ladder-finder"') > page.lower().rfind("<script src")
        assert set(trees[name]) == set(trees["reference"])  # only the page changes
    assert ladder.RECOLOUR_BACKGROUND in _page(trees["recoloured"])
    assert "translate(10vw, 10vh)" in _page(trees["shifted"])
    assert "<style" not in _page(trees["missing"]).replace(reference, "")
    assert '"remove": true' in _page(trees["missing"])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_cheats_serve_the_desktop_evidence(case: Path) -> None:
    _, trees = _variants(case)
    evidence = (case / "public" / "evidence" / "desktop.png").read_bytes()
    width, height = ladder.png_size(evidence)
    assert width == 1440 and height >= 1
    background = trees["evidence-background"]
    assert background[ladder.EVIDENCE_ASSET] == evidence
    assert f"url('{ladder.EVIDENCE_ASSET}')" in _page(background)
    assert f"min-height: {height}px" in _page(background)
    assert "visibility: hidden" in _page(background)
    image = trees["image-only"]
    assert image[ladder.EVIDENCE_ASSET] == evidence
    assert f'<img id="{ladder.SHOT_ID}" src="{ladder.EVIDENCE_ASSET}"' in _page(image)
    assert "display: none" in _page(image)


def test_blank_has_no_content_and_faithful_is_not_a_copy() -> None:
    assert "<body></body>" in _page(ladder.blank())
    case = REPO / "cases" / "todomvc"
    _, trees = _variants(case)
    shared = set(trees["faithful"].items()) & set(trees["reference"].items())
    assert not shared, "the faithful answer copies reference files byte for byte"


def test_box_regions_and_unsupported_selectors_are_refused() -> None:
    with pytest.raises(ValueError, match="box region"):
        ladder.finder_script(Region(id="r", box=(0, 0, 10, 10)))
    with pytest.raises(ValueError, match="not supported"):
        ladder.finder_script(Region(id="r", selector=".class"))
    with pytest.raises(ValueError, match="no regions"):
        ladder.target_region(Grading(weights={"global_visual": 1.0}))
    with pytest.raises(ValueError, match="not a PNG"):
        ladder.png_size(b"GIF89a")


# In the browser: the variants render as intended ------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    from recon.render import open_browser

    with open_browser() as opened:
        yield opened


def _render(browser: Browser, tree: ladder.Tree) -> tuple[np.ndarray, list[dict[str, Any]]]:
    from recon.render import Viewport, capture

    shot = capture(browser, tree.get, "/", Viewport("desktop", 1440, 900))
    image = np.asarray(Image.open(io.BytesIO(shot.full_png)).convert("RGB"))
    return image, shot.dom


def _names(dom: list[dict[str, Any]]) -> set[object]:
    return {e.get("name") for e in dom} | {e.get("text") for e in dom}


def _box(dom: list[dict[str, Any]], name: str) -> list[int]:
    return list(next(e["box"] for e in dom if e.get("name") == name))


@pytest.mark.browser
def test_rendered_variants_show_their_defect(browser: Browser) -> None:
    case = REPO / "cases" / "todomvc"
    grading, trees = _variants(case)
    region = ladder.target_region(grading)
    assert region.selector == 'ul[aria-label="Todo list"]'
    reference, ref_dom = _render(browser, trees["reference"])
    assert "Todo list" in _names(ref_dom) and "Pin the evidence" in _names(ref_dom)

    recoloured, _ = _render(browser, trees["recoloured"])
    green = np.all(recoloured == (0, 200, 40), axis=2)
    assert green.sum() > 10_000 and not np.all(reference == (0, 200, 40), axis=2).any()

    _, shifted_dom = _render(browser, trees["shifted"])
    ref_box = _box(ref_dom, "Todo list")
    new_box = _box(shifted_dom, "Todo list")
    assert (new_box[0] - ref_box[0], new_box[1] - ref_box[1]) == (144, 90)  # 10vw, 10vh

    _, missing_dom = _render(browser, trees["missing"])
    assert "Todo list" not in _names(missing_dom)
    assert "Pin the evidence" not in _names(missing_dom)
    assert "todos" in _names(missing_dom)  # only the region went

    blank, _ = _render(browser, trees["blank"])
    assert np.all(blank == 255)

    evidence = np.asarray(Image.open(case / "public/evidence/desktop.png").convert("RGB"))
    for cheat in ladder.CHEATS:
        shown, _ = _render(browser, trees[cheat])
        assert shown.shape == evidence.shape
        assert np.abs(shown.astype(int) - evidence).mean() < 1.0, cheat
