"""The difference heatmap on real renders (issue 14): near-empty for a faithful attempt,
lit up where the validity ladder's ``shifted`` variant moved the target region.

Both pages are rendered by the harness's own capture (chromium, pinned fonts) at the
desktop viewport and compared with the case's public desktop evidence still, as the site
cell compares a Candidate's capture with it: never with an oracle capture or a sealed
region (the target box below only checks where the heat is).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from recon.curate import ladder
from recon.model import Grading, load_yaml
from recon.render import Viewport, open_browser
from recon.render.capture import capture
from recon.site.heatmap import decode, dissimilarity, overlay

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
CASE = REPO / "cases" / "todomvc"
ANSWER = REPO / "entries" / "scripted" / "answers" / "todomvc" / "faithful"
DESKTOP = Viewport("desktop", 1440, 900)
REACH = 3  # a 7x7 window reaches 3 px past the pixels that changed


def _render(browser: object, tree: ladder.Tree) -> np.ndarray:
    shot = capture(browser, tree.get, "/", DESKTOP)  # type: ignore[arg-type]
    image = decode(shot.full_png)
    assert image is not None
    return image


def test_faithful_is_near_empty_and_shifted_lights_up_the_moved_region() -> None:
    grading = load_yaml(Grading, CASE / "sealed" / "grading.yaml")
    reference = ladder.read_tree(CASE / "sealed" / "reference")
    evidence = decode((CASE / "public" / "evidence" / "desktop.png").read_bytes())
    assert evidence is not None
    with open_browser() as browser:
        target = ladder.resolve_target(browser, reference, ladder.target_region(grading))
        faithful = _render(browser, ladder.answer_tree(CASE, ANSWER))
        shifted = _render(browser, ladder.shifted(reference, target))
    calm, lit = dissimilarity(evidence, faithful), dissimilarity(evidence, shifted)

    x, y, w, h = target.box
    dx, dy = round(ladder.SHIFT_FRACTION * 1440), round(ladder.SHIFT_FRACTION * 900)
    region = np.zeros(lit.shape, dtype=bool)  # where the region was and where it went
    region[max(0, y - REACH) : y + h + REACH, max(0, x - REACH) : x + w + REACH] = True
    region[y + dy - REACH : y + dy + h + REACH, x + dx - REACH : x + dx + w + REACH] = True
    print(
        f"\nfaithful: sum {calm.sum():.1f}, max {calm.max():.3f}; shifted: sum {lit.sum():.1f}, "
        f"{lit[region].sum() / lit.sum():.1%} inside the region's old and new box {target.box}"
    )
    assert calm.sum() < 0.01 * lit.sum() and calm.mean() < 0.001
    assert lit[region].sum() > 0.9 * lit.sum()  # the heat is where the region moved
    assert lit[region].mean() > 20 * max(lit[~region].mean(), 1e-6)
    assert (lit[y : y + h, x : x + w] > 0.25).mean() > 0.2  # and the old box lights up

    red = overlay(shifted, lit).astype(int)
    excess = red[..., 0] - red[..., 1]  # the overlay draws heat in red over grey
    assert excess[region].sum() > 0.9 * excess.sum() > 0
    assert (overlay(faithful, calm)[..., 0] - overlay(faithful, calm)[..., 1]).max() <= 3
