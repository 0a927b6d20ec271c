"""Issue 17: global visual agrees with people on variants of every page's reference.

Each page is a case of ``suite_cases()`` (the demo release's; every case under ``cases/``
with ``RECON_FULL_SUITE=1``, so a new case is covered) or a
synthetic page under ``tests/grade/pages/`` (a page taller than two screens with
gradients, a background image and images, which the cases lack). Its reference, its
scripted faithful answer (``entries/scripted/answers/<case>/faithful/`` over the starter,
where there is one; else
the reference stands for it) and every variant of ``visual_variants`` are rendered by the
real renderer (``recon.render.capture``) at the route ``/`` of each viewport of the
page's contract, and graded as the grade cell grades them (``recon.grade.attempt``'s
global visual: the mean of ``global_visual.score`` over those points, on stills and DOM
snapshots).

A variant that does not apply at a point (a page no taller than two screens has no
"first screen only") leaves the page as it was there; it must then score like the
faithful answer, and the requirement is judged on the points where it applies.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import Browser

from recon.curate.ladder import answer_tree
from recon.grade.attempt import View, _global, decode_png
from recon.model import load_yaml
from recon.model.contract import Contract
from recon.model.matrix import Point
from recon.render import Viewport
from recon.render.browser import chromium_path, open_browser
from recon.render.capture import capture
from tests.conftest import suite_cases
from tests.grade import visual_variants as vv

REPO = Path(__file__).resolve().parents[2]
ANSWERS = REPO / "entries" / "scripted" / "answers"
CASES = [REPO / "cases" / case for case in suite_cases()]  # RECON_FULL_SUITE=1: all
SYNTHETIC = sorted(p.parent for p in (REPO / "tests" / "grade" / "pages").glob("*/contract.yaml"))
PAGES = [*CASES, *SYNTHETIC]
NO_OP = 0.02
"""How far below the faithful answer a variant that changes nothing may score."""

needs_chromium = pytest.mark.skipif(
    not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
)


@dataclass
class Graded:
    """One page's builds graded: per build, per point, the global visual row."""

    rows: dict[str, dict[str, dict[str, Any]]]
    applies: dict[str, dict[str, bool]]  # variant -> point -> does it change the page there

    def score(self, build: str, points: list[str] | None = None) -> float:
        chosen = points or sorted(self.rows[build])
        return float(np.mean([self.rows[build][p]["score"] for p in chosen]))

    def table(self, name: str) -> str:
        points = sorted(self.rows["reference"])
        lines = [f"global visual on {name} (* the variant does not apply at that point)"]
        lines.append(
            "  " + " ".join([f"{'build':14}", f"{'mean':>6}", *(f"{p:>28}" for p in points)])
        )
        for build, rows in self.rows.items():
            cells = [
                f"{rows[p]['score']:.3f}{'' if self.applies.get(build, {}).get(p, True) else '*'}"
                for p in points
            ]
            lines.append(
                "  "
                + " ".join(
                    [f"{build:14}", f"{self.score(build):6.3f}", *(f"{c:>28}" for c in cells)]
                )
            )
        return "\n".join(lines)


def _layout(page: Path) -> tuple[Path, Path, vv.Tree | None]:
    """(contract, reference folder, faithful answer's build or None) of a case or page."""
    if (page / "sealed").is_dir():
        answer = ANSWERS / page.name / "faithful"
        return (
            page / "public" / "contract.yaml",
            page / "sealed" / "reference",
            (answer_tree(page, answer) if answer.is_dir() else None),
        )
    return page / "contract.yaml", page / "reference", None


def _render(browser: Browser, tree: vv.Tree, contract: Contract) -> dict[str, View]:
    views = {}
    for vp in contract.viewports:
        shot = capture(browser, tree.get, "/", Viewport(vp.name, vp.width, vp.height))
        point = Point("/", vp)
        views[point.id] = View(
            point=point,
            image=decode_png(shot.full_png),
            dom=shot.dom,
            failure=shot.failure,
        )
    return views


def _render_all(
    browser: Browser, builds: dict[str, vv.Tree], contract: Contract
) -> dict[str, dict[str, View]]:
    """Every build rendered, every other one in a second chromium on a thread of its own
    (as `doit -n 2 -P thread` renders a release: one browser per thread); in ``builds``'
    order."""
    names = list(builds)

    def second() -> dict[str, dict[str, View]]:
        with open_browser() as other:  # playwright: one browser per thread
            return {name: _render(other, builds[name], contract) for name in names[1::2]}

    with ThreadPoolExecutor(max_workers=1) as beside:
        theirs = beside.submit(second)
        views = {name: _render(browser, builds[name], contract) for name in names[::2]}
        views |= theirs.result()
    return {name: views[name] for name in names}


@pytest.fixture(scope="module", params=PAGES, ids=[p.name for p in PAGES])
def graded(request: pytest.FixtureRequest, browser: Browser) -> tuple[str, Graded]:
    contract_path, reference_dir, answer = _layout(request.param)
    contract = load_yaml(Contract, contract_path)
    reference = vv.read_tree(reference_dir)
    builds = {"reference": reference, "faithful": answer or reference}
    builds |= vv.variants(reference)
    views = _render_all(browser, builds, contract)
    want = views["reference"]
    rows = {
        name: {r["point"]: r for r in _global(got, want)["rows"]} for name, got in views.items()
    }
    applies = {
        variant: {
            point: _applies(variant, views[variant][point], ref) for point, ref in want.items()
        }
        for variant in vv.VARIANTS
    }
    result = Graded(rows=rows, applies=applies)
    print(result.table(request.param.name))
    return request.param.name, result


def _applies(variant: str, got: View, ref: View) -> bool:
    assert got.image is not None and ref.image is not None, got.failure
    return vv.applies(variant, ref.image, got.image)


Check = Callable[[float, float, float], bool]
REQUIRED: dict[str, tuple[str, Check]] = {
    # seen (beyond the no-op tolerance), not "-0.10", since issue 28's fit
    # (releases/calibrations/real-reconstructions.yaml): how much a grey copy loses is
    # people's weighting of colour and palette (0.09 and 0.18 of the content path's
    # appearance), 0.045-0.149 over the suite (the card's variant table)
    "grey": ("< faithful - 0.02", lambda s, faithful, white: s < faithful - NO_OP),
    # "loses at least a quarter", not "<= 0.35", since issue 28's study: people chose
    # pages with under half the reference's content and its look over fuller ones, and
    # pages reaching 60% of its content bands (the guard's span floor is fitted at 0.5); on
    # clean-blog's mobile page the first screen holds 47% of the content and 44% of its
    # bands (0.716 under global-visual/6; the card's variant table)
    "first-screen": ("<= faithful - 0.25", lambda s, faithful, white: s <= faithful - 0.25),
    "top-150": ("<= 0.20", lambda s, faithful, white: s <= 0.20),
    "flat": (">= 0.6", lambda s, faithful, white: s >= 0.6),
    "unstyled": ("below faithful, above blank", lambda s, faithful, white: white < s < faithful),
    "shift-40": (">= 0.8", lambda s, faithful, white: s >= 0.8),
    "white": ("<= 0.05", lambda s, faithful, white: s <= 0.05),
    "reorder": ("below faithful, above blank", lambda s, faithful, white: white < s < faithful),
}


@pytest.mark.browser
@needs_chromium
@pytest.mark.parametrize("variant", vv.VARIANTS)
def test_variant_meets_its_requirement(graded: tuple[str, Graded], variant: str) -> None:
    name, g = graded
    report = g.table(name)
    where = [p for p, yes in g.applies[variant].items() if yes]
    for point in sorted(set(g.applies[variant]) - set(where)):  # the page as it was
        got, faithful = g.rows[variant][point]["score"], g.rows["faithful"][point]["score"]
        assert got >= faithful - NO_OP, f"{variant} changes nothing at {point}\n{report}"
    if not where:
        print(f"{variant} does not apply to {name}: checked as a no-op")
        return
    rule, check = REQUIRED[variant]
    score = g.score(variant, where)
    assert check(score, g.score("faithful", where), g.score("white", where)), (
        f"{variant} on {name} scores {score:.3f}, required {rule}\n{report}"
    )


@pytest.mark.browser
@needs_chromium
def test_right_content_is_never_blank(graded: tuple[str, Graded]) -> None:
    """The guard is decided by content and ink: the variants that keep the content keep
    full coverage and span and at least half the guard; the white page gets none."""
    name, g = graded
    for build in ("faithful", "grey", "flat", "unstyled", "shift-40", "reorder"):
        for point, row in g.rows[build].items():
            t = row["terms"]
            assert t["coverage_guard"] == t["span_guard"] == 1.0 and t["guard"] >= 0.5, (
                f"{build} guarded at {point}\n{g.table(name)}"
            )
    assert all(row["terms"]["guard"] == 0.0 for row in g.rows["white"].values())


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_every_variant_is_generated_from_the_reference(page: Path) -> None:
    _, reference_dir, _ = _layout(page)
    reference = vv.read_tree(reference_dir)
    trees = vv.variants(reference)
    assert list(trees) == list(vv.VARIANTS)
    pages = {name: vv.page(tree) for name, tree in trees.items()}
    assert len(set(pages.values())) == len(pages), "two variants serve the same page"
    assert "grayscale(1)" in pages["grey"] and "background-image: none" in pages["flat"]
    assert f"border-top: {vv.SHIFT_PX}px" in pages["shift-40"]
    assert "innerHeight" in pages["first-screen"] and f"= {vv.TOP_PX};" in pages["top-150"]
    assert "stylesheet" not in pages["unstyled"].lower() and "<style" not in pages["unstyled"]
    for name in ("grey", "first-screen", "top-150", "flat", "shift-40", "reorder"):
        assert set(trees[name]) == set(reference)  # only the page changes
    assert trees["white"] == {vv.PAGE: vv.WHITE_PAGE}
