"""Global visual's fit as a calibration (issue 28): ``recon calibrate fit --study`` fits the
term weights per path on a study's consensus pairs, judges them held out by page, and
writes them as a calibration's ``visual`` part; a release naming it grades global visual
with them. The fit here is run on synthetic terms (no browser); the shipped calibration
is checked against the metric's own fit, and the command on a tiny study with chromium."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import yaml
from pydantic import ValidationError

from recon.calibrate.study import Pair
from recon.calibrate.visual import FLOORS, TERMS, composed, fit_visual, floors
from recon.grade import global_visual
from recon.model import Calibration, load_yaml
from recon.model.grading import Grading, VisualWeights
from recon.render.browser import chromium_path
from tests.calibrate.test_study import write_study
from tests.conftest import recon

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "releases" / "calibrations" / "real-reconstructions.yaml"


def terms(path: str, **values: float) -> dict[str, float]:
    """One reconstruction's stored terms on ``path`` (every term 0.5 unless given)."""
    found = {f"{path}.{t}": values.get(t, 0.5) for t in TERMS[path]}
    flags = {"colour_applicable": 1.0, "layout_applicable": 1.0, "extent_applicable": 1.0}
    flags |= {"position_applicable": 1.0, "content_applicable": float(path == "content")}
    flags |= {"ink_ratio": 1.0, "coverage": values.get("coverage", 1.0)}
    flags |= {"span": values.get("span", 1.0)}
    return found | {f"{path}.{k}": v for k, v in flags.items()}


def study(decider: str, pages: int = 10) -> tuple[list[Pair], dict[str, dict[str, float]]]:
    """Pairs whose winner has the higher ``decider`` term; every other term is noise."""
    rng = np.random.default_rng(3)
    pairs, scores = [], {}
    for n in range(pages):
        page = f"p{n}"
        for method in ("a", "b", "c"):
            noise = {t: float(rng.uniform(0, 1)) for t in TERMS["content"]}
            scores[f"{page}/{method}"] = terms("content", **noise) | terms("image", **noise)
        for a, b in (("a", "b"), ("b", "c"), ("a", "c")):
            better = (
                scores[f"{page}/{a}"][f"content.{decider}"]
                > scores[f"{page}/{b}"][f"content.{decider}"]
            )
            pairs.append(Pair(page, a, b, 1 if better else -1))
    return pairs, scores


def test_the_deciding_term_gets_the_weight_and_agrees_held_out() -> None:
    pairs, scores = study("layout")
    weights, paths, per_fold = fit_visual(pairs, scores)
    assert len(per_fold) == 5 and all(set(f) == set(FLOORS) for f in per_fold)
    for path in ("content", "image"):
        w = weights.path(path)
        assert max(w, key=lambda t: w[t]) == "layout", w
        assert sum(w.values()) == pytest.approx(1.0, abs=1e-9)
        assert paths[path].held_out.agreement >= 0.9
        assert paths[path].held_out.judgements == len(pairs) and len(paths[path].folds) == 5
    # the metric's own fit is judged on the same pairs ("before"), for comparison
    before = [composed(scores[f"{p.page}/{p.a}"], "content", global_visual.DEFAULT) for p in pairs]
    assert len(before) == len(pairs) and paths["content"].before.judgements == len(pairs)


def test_a_term_that_decides_nothing_gets_no_weight_where_another_decides() -> None:
    pairs, scores = study("palette")
    weights, paths, _floors = fit_visual(pairs, scores)
    assert weights.content["palette"] > 0.5 and weights.content["ssim"] < 0.2
    assert paths["content"].in_sample.agreement >= paths["content"].held_out.agreement - 0.2


@pytest.mark.parametrize("fuller_wins", [False, True])
def test_the_guard_floors_follow_the_judgements(fuller_wins: bool) -> None:
    """A page with 30% of the content and the better layout against a full one: people who
    choose it set the coverage floor at or below 0.3 (the strictest that agrees), people
    who reject it the strictest, 0.5 (0.3/0.4 * 0.7 < 0.6 < 0.7)."""
    layout_only = global_visual.DEFAULT.model_copy(update={
        "content": {t: float(t == "layout") for t in TERMS["content"]},
        "image": {t: float(t == "layout") for t in TERMS["image"]},
    })  # fmt: skip
    scores, pairs = {}, []
    for n in range(6):
        short = terms("content", layout=0.7, coverage=0.3) | terms("image", layout=0.7)
        scores[f"p{n}/short"] = short
        scores[f"p{n}/full"] = terms("content", layout=0.6) | terms("image", layout=0.6)
        pairs.append(Pair(f"p{n}", "short", "full", -1 if fuller_wins else 1))
    chosen = floors(pairs, scores, layout_only)
    assert chosen.coverage_floor == (0.5 if fuller_wins else 0.3)
    assert chosen.content == layout_only.content  # the floors alone are chosen
    assert (chosen.span_floor, chosen.ink_floor) == (1.0, 0.6)  # nothing decides: strictest


def test_a_study_without_a_consensus_pair_is_refused() -> None:
    from recon.errors import ConfigError

    with pytest.raises(ConfigError, match="no consensus pair"):
        fit_visual([], {})


def test_the_shipped_calibration_is_the_metrics_own_fit() -> None:
    shipped = load_yaml(Calibration, SHIPPED)
    assert shipped.visual is not None and shipped.weights is None
    assert shipped.visual.weights == global_visual.DEFAULT
    assert shipped.visual.pairs == 89
    for release in ("suite", "2025q1"):
        named = yaml.safe_load((REPO / "releases" / f"{release}.yaml").read_text())
        assert named["calibration"] == SHIPPED.stem, release


def test_a_calibration_holds_weights_or_a_visual_fit() -> None:
    shipped = load_yaml(Calibration, SHIPPED).model_dump()
    with pytest.raises(ValidationError, match="neither weights nor visual"):
        Calibration.model_validate(shipped | {"visual": None})
    dims = dict.fromkeys(("global_visual", "regional_visual", "functional", "responsive"), 0.25)
    dims |= dict.fromkeys(("workflow", "preservation", "policy"), 0.0)
    with pytest.raises(ValidationError, match="weights and report come together"):
        Calibration.model_validate(shipped | {"weights": dims})


def test_visual_weights_write_every_term_out_and_sum_to_one() -> None:
    own = global_visual.DEFAULT.model_dump()
    with pytest.raises(ValidationError, match="no weight for \\['extent'\\]"):
        short = {k: v for k, v in own["image"].items() if k != "extent"}
        VisualWeights.model_validate(own | {"image": short})
    with pytest.raises(ValidationError, match="sum to 1"):
        VisualWeights.model_validate(own | {"content": {**own["content"], "layout": 0.9}})
    with pytest.raises(ValidationError, match="floor must be above 0"):
        VisualWeights.model_validate(own | {"ink_floor": 0.0})


def test_a_release_grades_global_visual_with_its_calibrations_fit() -> None:
    """What the grade cell does with a calibration: ``applied`` sets the grading's visual
    fit, and global visual scores with it (every weight in the terms)."""
    shipped = load_yaml(Calibration, SHIPPED)
    assert shipped.visual is not None
    layout_only = VisualWeights(
        content={t: float(t == "layout") for t in TERMS["content"]},
        image={t: float(t == "layout") for t in TERMS["image"]},
    )
    fit = shipped.model_copy(
        update={"visual": shipped.visual.model_copy(update={"weights": layout_only})}
    )
    grading = Grading.model_validate(
        {"schema_version": 1, "weights": {"global_visual": 1.0, "regional_visual": 0.0,
         "functional": 0.0, "responsive": 0.0, "workflow": 0.0, "preservation": 0.0,
         "policy": 0.0}}
    )  # fmt: skip
    applied = fit.applied(grading)
    assert grading.visual is None and applied.visual == layout_only
    assert applied.weights == grading.weights  # a visual fit leaves the dimensions alone
    ref = np.full((400, 400, 3), 255, dtype=np.uint8)
    ref[42:358:6, 22:178] = 30  # lines of text in a left column
    cand = np.full_like(ref, 255)
    cand[42:358:6, 222:378] = (200, 40, 40)  # red lines in a right column
    own = global_visual.score(cand, ref)
    only = global_visual.score(cand, ref, weights=applied.visual)
    assert only.terms["w_layout"] == 1.0 and own.terms["w_layout"] < 0.5
    assert only.score == pytest.approx(only.terms["layout"] * only.terms["guard"])
    assert only.score != pytest.approx(own.score)


needs_chromium = pytest.mark.skipif(
    not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
)


@needs_chromium
@pytest.mark.browser
def test_recon_calibrate_fit_study_writes_the_visual_part(tmp_path: Path) -> None:
    from tests.calibrate.test_study import judgement

    pages = tuple(f"p{i}" for i in range(1, 8))  # each fold's training pages fold again
    rows = [judgement(p, "copy", "other", "a", "a") for p in pages]
    rows += [judgement(p, "other", "copy", "b", "b") for p in pages]
    folder = write_study(tmp_path / "study", rows, pages)
    project = tmp_path / "project"
    (project / "releases").mkdir(parents=True)
    (project / "cases").mkdir()
    (project / "entries").mkdir()
    argv = ["calibrate", "fit", "--study", str(folder), "--id", "tiny"]
    got = recon(project, *argv, "--cache", str(tmp_path / "cache"))
    assert got.returncode == 0, got.stderr
    assert "global visual on 14 consensus pair(s)" in got.stdout
    written = load_yaml(Calibration, project / "releases" / "calibrations" / "tiny.yaml")
    assert written.visual is not None and written.visual.pairs == 14
    assert written.visual.viewport == "1440x900"
    assert set(written.visual.study) == {"judgments.jsonl", "pages"}
    both = recon(project, *argv, "prefs.jsonl")
    assert both.returncode == 2 and "give no preference files" in both.stderr
    assert "Traceback" not in both.stderr
