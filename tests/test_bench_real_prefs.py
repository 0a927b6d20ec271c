"""``bench/real_prefs.py --data DIR --json`` counts each metric's agreement with a study's
consensus, ties and disagreements left out; bad input is one line naming the file and the
field, exit 2. The study is a tiny folder written by the test and drawn without a browser
(``tests/calibrate/test_study.py``)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

from recon.calibrate import visual
from recon.calibrate.renders import Shoot
from recon.calibrate.study import Pair
from recon.model.viewport import Viewport
from tests.calibrate.test_study import ROWS, Shooter, judgement, write_study
from tests.conftest import bench_module
from tests.grade.synthetic import el


def real_prefs() -> ModuleType:
    return bench_module("real_prefs")


def test_json_maps_content_and_image_to_their_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = write_study(tmp_path / "study")
    shooter = Shooter()
    argv = ["--data", str(study), "--cache", str(tmp_path / "cache"), "--json"]
    prefs = tmp_path / "prefs.jsonl"
    assert real_prefs().main([*argv, "--prefs-out", str(prefs)], lambda _vp: shooter()) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["judgements"], report["pairs"], report["ties"]) == (5, 3, 1)
    assert report["disagreements"] == 1
    for metric in ("content", "image"):
        got = report["metrics"][metric]
        assert (got["agree"], got["pairs"]) == (2, 3)
        assert got["share"] == pytest.approx(2 / 3, abs=1e-6)
    assert report["preference_rows"] == {"written": 10, "same_still": 0}
    assert (report["regional"]["pairs"], report["regional"]["pages"]) == (0, 0)  # no DOM
    assert len(prefs.read_text().splitlines()) == 10
    again = Shooter()  # a re-run renders nothing: every page is in the cache
    assert real_prefs().main(argv, lambda _vp: again()) == 0
    assert again.opened == 0
    assert json.loads(capsys.readouterr().out)["metrics"] == report["metrics"]


def test_candidates_are_fitted_with_folds_by_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pages = tuple(f"p{i}" for i in range(1, 8))  # each fold's training pages fold again
    rows = [judgement(p, "copy", "other", "a", "a") for p in pages]
    rows += [judgement(p, "other", "copy", "b", "b") for p in pages]
    study = write_study(tmp_path / "study", rows, pages)
    argv = ["--data", str(study), "--train", str(study), "--cache", str(tmp_path / "cache")]
    shooter = Shooter()
    assert real_prefs().main([*argv, "--candidates", "--json"], lambda _vp: shooter()) == 0
    report = json.loads(capsys.readouterr().out)
    applied = report["fitted"]["applied from --train"]
    assert set(applied) == set(real_prefs().FEATURES)
    assert all(f["pairs"] == 14 for f in applied.values())
    assert report["terms"]["cand.ink_ratio"]["pairs"] == 14
    assert 0.0 <= report["white_page"]["white_median"] <= 1.0
    train = ["--train", str(study), "--cache", str(tmp_path / "cache"), "--candidates", "--json"]
    assert real_prefs().main(train, lambda _vp: shooter()) == 0
    trained = json.loads(capsys.readouterr().out)
    fitted = trained["fitted"]
    assert all(f["held_out"]["pairs"] == 14 for f in fitted["k-fold"].values())
    shipped = fitted["shipped, k-fold"]  # each path's weights refitted per fold
    assert set(shipped) == {"content", "image"}
    for path in shipped.values():
        assert path["held_out"]["pairs"] == 14 and len(path["weights per fold"]) == 5


class Landmarked(Shooter):
    """The same stills, with a DOM: the original and its copy show an ``h1``, the other a
    paragraph."""

    @contextmanager
    def __call__(self) -> Iterator[Shoot]:
        with super().__call__() as shoot:

            def with_dom(html: bytes) -> tuple[bytes, list[dict[str, Any]], str | None]:
                png, _dom, failure = shoot(html)
                tag, text = ("h1", "Hello") if b"<h1>" in html else ("p", "Something else.")
                return png, [el(tag, (0, 0, 64, 16), text)], failure

            yield with_dom


def test_regional_visual_is_judged_where_a_landmark_maps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every original has an ``h1``: its copy keeps it (regional 1), the other does not,
    so regional visual agrees where the copy was chosen (p1, p2) and not on p3."""
    study = write_study(tmp_path / "study")
    shooter = Landmarked()
    argv = ["--data", str(study), "--cache", str(tmp_path / "cache"), "--json"]
    assert real_prefs().main(argv, lambda _vp: shooter()) == 0
    got = json.loads(capsys.readouterr().out)["regional"]
    assert (got["agree"], got["pairs"], got["pages"]) == (2, 3, 3)
    assert got["landmarks"] == {p: ["h1"] for p in ("p1", "p2", "p3")}


def test_misses_are_written_as_pictures_with_the_terms_that_decided_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """p3's raters chose the other page over the copy: a miss on both paths."""
    study = write_study(tmp_path / "study")
    shooter = Shooter()
    misses = tmp_path / "misses"
    argv = ["--data", str(study), "--cache", str(tmp_path / "cache"), "--json"]
    assert real_prefs().main([*argv, "--misses", str(misses)], lambda _vp: shooter()) == 0
    report = json.loads(capsys.readouterr().out)["misses"]
    for path in ("content", "image"):
        (miss,) = report[path]
        assert (miss["page"], miss["chosen"], miss["other"]) == ("p3", "other", "copy")
        assert miss["scores"][0] < miss["scores"][1] and "palette" in miss["terms"]
        assert (misses / miss["picture"]).is_file()


def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = write_study(tmp_path / "study", [*ROWS[:1], judgement("p2", "copy", "gone", "a", "a")])

    def refuse(_vp: Viewport) -> object:
        raise AssertionError("nothing is rendered for a study that does not hold up")

    argv = ["--data", str(study), "--cache", str(tmp_path / "cache"), "--json"]
    assert real_prefs().main(argv, refuse) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert "judgments.jsonl:2: b:" in err and "pages/p2/gone.html does not exist" in err


def _page(texts: list[tuple[str, tuple[int, int, int, int], int, tuple[int, int, int]]]) -> Any:
    """A Render of text blocks (text, box, font px, glyph colour) drawn as dark bars on white."""
    from recon.calibrate.renders import Render

    image = np.full((600, 800, 3), 255, dtype=np.uint8)
    dom = [el("html", (0, 0, 800, 600))]
    for text, box, size, fill in texts:
        x, y, w, h = box
        image[y + 2 : y + h - 2, x + 2 : x + w - 2] = fill
        element = el("p", box, text)
        element["font"] = {"family": "Lato", "size": f"{size}px", "weight": "400"}
        element["ink"] = {"fill": [*fill, 1], "backdrop": [255, 255, 255], "size": size}
        dom.append(element)
    return Render(digest="", image=image, dom=dom, failure=None, cached=False)


TITLE = "an update on domains"
BODY = "google no longer offers new domain registrations but try squarespace instead"


def test_text_style_reads_the_headline_and_the_paired_texts_style() -> None:
    """The reference's large title found at its size and place is a headline kept; set
    small at the left, or left out, it is not. Body text in another colour costs fill."""
    style = real_prefs().text_style
    ref = _page(
        [(TITLE, (300, 40, 200, 60), 48, (0, 0, 0)), (BODY, (100, 200, 600, 30), 16, (0, 0, 0))]
    )
    same = style(ref, ref)
    assert same == pytest.approx(
        {"text_size": 1, "text_fill": 1, "text_backdrop": 1, "headline": 1}
    )
    small = _page(
        [(TITLE, (0, 40, 120, 20), 16, (0, 0, 0)), (BODY, (100, 200, 600, 30), 16, (200, 0, 0))]
    )
    got = style(small, ref)
    assert got["headline"] == 0  # 48 px set at 16 px is more than an octave off
    assert 0 < got["text_size"] < 1 and got["text_fill"] < 1 and got["text_backdrop"] == 1
    gone = _page([(BODY, (100, 200, 600, 30), 16, (0, 0, 0))])
    assert style(gone, ref)["headline"] == 0 and style(gone, ref)["text_fill"] == 1
    assert style(ref, _page([])) == {}  # a reference without text has no text terms


def test_the_ceiling_is_fitted_with_either_sign() -> None:
    """A term that people prefer low gets a negative weight in the signed fit only."""
    bench = real_prefs()
    pairs = [Pair(f"p{i}", "a", "b", 1 if i % 2 else -1) for i in range(10)]
    scores = {}
    for p in pairs:
        good, bad = ("a", "b") if p.winner > 0 else ("b", "a")
        scores[f"{p.page}/{good}"] = {"x": 0.0, "y": 1.0}
        scores[f"{p.page}/{bad}"] = {"x": 1.0, "y": 0.0}
    features = {"unsigned": ["x", "y"], bench.CEILING: ["x", "y"]}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bench, "FEATURES", features)
        got = bench.fitted(pairs, scores, 0)
    assert got[bench.CEILING]["weights"]["x"] < 0 < got[bench.CEILING]["weights"]["y"]
    assert got["unsigned"]["weights"]["x"] == 0 < got["unsigned"]["weights"]["y"]
    assert got[bench.CEILING]["held_out"]["share"] == 1.0


def test_a_blend_of_the_paths_is_judged_held_out_and_its_choice_too() -> None:
    """Ten pages, ``a`` chosen on each: the content path agrees on pages 0-5, the image path
    on 4-9, and only a blend with 0.25 < α < 2/3 of the image path agrees on all ten. Per
    fold seed each α's held-out count is exact, and α chosen inside the training folds is
    the smallest of the best (0.3), held out on every fold."""
    bench = real_prefs()
    pairs = [Pair(f"p{i}", "a", "b", 1) for i in range(10)]
    content = [1.0] * 6 + [-1.0] * 4
    image = [-0.5] * 4 + [3.0] * 6
    scores = {}
    for i, p in enumerate(pairs):
        scores[f"{p.page}/a"] = {"content.s": content[i], "image.s": image[i]}
        scores[f"{p.page}/b"] = {"content.s": 0.0, "image.s": 0.0}
    trained: list[int] = []

    def stub(kept: list[Pair], _scores: object, _seed: int) -> None:
        trained.append(len({p.page for p in kept}))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bench, "trained", stub)
        mp.setattr(bench, "composed", lambda s, path, _w: s[f"{path}.s"])
        got = bench.blended(pairs, scores, range(2))
    assert got["pairs"] == 10 and got["seeds"] == [0, 1]
    expected = [6, 6, 6, 10, 10, 10, 10, 6, 6, 6, 6]
    assert [got["alpha"][f"{a:.1f}"]["agree"] for a in bench.BLEND] == [[e, e] for e in expected]
    assert got["alpha"]["0.5"]["mean_share"] == 1.0
    assert got["nested"]["agree"] == [10, 10]
    assert got["nested"]["chosen"] == [[0.3] * 5, [0.3] * 5]
    # per seed, 5 folds, then inside each fold's 8 training pages 5 folds again and the
    # chosen α's fit: never a page that is judged with them
    assert len(trained) == 2 * (5 + 5 * 5 + 5)
    assert max(trained) == 8 and min(trained) >= 6


def test_terms_raised_to_a_power_are_judged_held_out_and_the_power_chosen_per_fold() -> None:
    """Ten pages, ``a`` chosen on each, a path's score the sum of two raised terms. On pages
    0-5 ``a`` = (0.65, 0) against (0.5, 0.5): it wins once p ≥ 3 (0.65^p > 2·0.5^p); on 6-9
    ``a`` = (0.5, 0.5) against (0.61, 0): it wins while p ≤ 3. Only p = 3 agrees on all ten,
    so chosen inside each training fold by agreement it is 3, held out on every fold; the
    log-loss rule (stubbed to prefer 2) takes 2, which agrees on four."""
    bench = real_prefs()
    pairs = [Pair(f"p{i}", "a", "b", 1) for i in range(10)]
    sides = [((0.65, 0.0), (0.5, 0.5))] * 6 + [((0.5, 0.5), (0.61, 0.0))] * 4
    scores = {}
    for p, (a, b) in zip(pairs, sides, strict=True):
        for method, (layout, palette) in (("a", a), ("b", b)):
            scores[f"{p.page}/{method}"] = {
                f"{path}.{t}": v
                for path in ("content", "image")
                for t, v in (("layout", layout), ("palette", palette))
            } | {"content.coverage": 0.3}
    trained: list[int] = []
    losses: list[int] = []

    def stub(kept: list[Pair], _scores: object, _seed: int) -> None:
        trained.append(len({p.page for p in kept}))

    def log_loss(_kept: object, raised: dict[str, dict[str, float]], _s: int, _p: str) -> float:
        power = round(np.log(raised["p0/a"]["content.layout"]) / np.log(0.65))
        losses.append(power)
        return abs(power - 2)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bench, "trained", stub)
        mp.setattr(bench, "log_loss", log_loss)
        # the points come from recon.calibrate.visual.judged, which composes there
        mp.setattr(
            visual, "composed", lambda s, path, _w: s[f"{path}.layout"] + s[f"{path}.palette"]
        )
        got = bench.powered(pairs, scores, range(2))
    assert got["pairs"] == 10 and got["seeds"] == [0, 1]
    for path in ("content", "image"):
        per_power = got["paths"][path]
        assert [per_power[str(p)]["agree"] for p in bench.POWERS] == [
            [4, 4],
            [4, 4],
            [10, 10],
            [6, 6],
        ]
        assert got["nested"][path]["agree"] == [10, 10]
        assert got["nested"][path]["chosen"] == [[3] * 5, [3] * 5]
        assert got["nested_log_loss"][path] == {"agree": [4, 4], "mean_share": 0.4,
                                                "chosen": [[2] * 5, [2] * 5]}  # fmt: skip
    # per seed: 5 folds x 4 powers (the chosen power's fit on a fold is one of them); inside
    # each fold 5 x 4 again on its 8 training pages: never a page judged with them
    assert len(trained) == 2 * (5 * 4 + 5 * (5 * 4))
    assert max(trained) == 8 and min(trained) >= 6
    assert sorted(set(losses)) == [1, 2, 3, 4] and len(losses) == 2 * 5 * 2 * 4
    text = "\n".join(bench._powered_lines(got))
    assert "p chosen by agreement" in text and "chosen [[3, 3, 3, 3, 3], [3, 3, 3, 3, 3]]" in text


def test_raising_reads_a_negative_term_as_zero_and_leaves_other_numbers() -> None:
    bench = real_prefs()
    got = bench.raised({"p/a": {"content.ssim": -0.2, "content.layout": 0.5,
                                "content.coverage": 0.5, "image.shape": 0.9}}, 2)  # fmt: skip
    assert got == {"p/a": {"content.ssim": 0.0, "content.layout": 0.25,
                           "content.coverage": 0.5, "image.shape": 0.9**2}}  # fmt: skip


def _sides(layout: float, palette: float, content: bool = True) -> dict[str, float]:
    """One reconstruction's stored terms on both paths: every term applies, the guard is 1;
    only layout and palette vary. ``content=False``: a page without content blocks, which
    both paths compose by the image path's weights."""
    found = {"colour_applicable": 1.0, "position_applicable": 1.0, "typeface_applicable": 1.0,
             "layout_applicable": 1.0, "extent_applicable": 1.0, "shape_applicable": 1.0,
             "ink_ratio": 1.0, "coverage": 1.0, "span": 1.0, "ssim": 0.5, "colour": 0.5,
             "position": 0.5, "typeface": 0.5, "extent": 0.5, "shape": 0.5,
             "layout": layout, "palette": palette}  # fmt: skip
    applies = {"content": 1.0 if content else 0.0, "image": 0.0}
    return {f"{path}.{k}": v for path in ("content", "image")
            for k, v in {**found, "content_applicable": applies[path]}.items()}  # fmt: skip


def test_the_weighting_ceiling_finds_the_best_weighting_and_what_none_wins() -> None:
    """p0, p1 are won by the better layout, p2 by the better palette: no weighting agrees
    on all three, the best on two. On p3 the chosen page is worse on both: no weighting
    agrees. On p4 the chosen page has no content blocks, composed by the image path's
    weights on the content path too, and scores higher whatever the content weights."""
    bench = real_prefs()
    pairs = [Pair(f"p{i}", "a", "b", 1) for i in range(5)]
    sides = [((1.0, 0.0), (0.0, 1.0)), ((0.9, 0.2), (0.1, 0.8)), ((0.0, 1.0), (1.0, 0.0)),
             ((0.2, 0.2), (0.6, 0.6)), ((1.0, 1.0), (0.1, 0.1))]  # fmt: skip
    scores = {}
    for p, (a, b) in zip(pairs, sides, strict=True):
        scores[f"{p.page}/a"] = _sides(*a, content=p.page != "p4")
        scores[f"{p.page}/b"] = _sides(*b)
    got = bench.weighting_ceiling(pairs, scores, 0, draws=2_000)
    assert got["draws"] == 2_000 * (1 + len(bench.REFINE)) + 1
    for path in ("content", "image"):
        c = got[path]
        assert (c["agree"], c["pairs"], c["share"]) == (3.0, 5, 0.6), (path, c)
        assert c["weights"]["layout"] > c["weights"]["palette"]
        assert c["missed"] == ["p2: a over b", "p3: a over b"]
        assert c["never"] == ["p3: a over b"]
    text = "\n".join(bench._ceiling_lines(got))
    assert "content 3 of 5 (0.600)" in text
    assert "missed by every weighting drawn: p3: a over b" in text
