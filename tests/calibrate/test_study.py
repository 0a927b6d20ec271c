"""A preference study on disk (issue 28): read and checked, turned into preference rows,
rendered once and cached, and its consensus counted with ties and disagreements left out.

Every study here is a tiny folder written by the test; the renders are drawn from the
page bytes by a stand-in shooter (no browser), except the one browser test, which renders
three small pages with recon's capture path."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from recon.calibrate.consensus import agreement_table, count, study_scores
from recon.calibrate.fit import group_folds
from recon.calibrate.renders import Cache, Shoot, browser_shooter, render_all
from recon.calibrate.study import consensus, preferences, read_study
from recon.errors import ConfigError
from recon.model import Judgement
from recon.model.viewport import Viewport
from recon.store import digest_bytes

ORIGINAL = "<html><body><h1>Hello</h1><p>The original page.</p></body></html>"
OTHER = "<html><body style='background:#123'><p>Something else.</p></body></html>"
SMALL = Viewport("small", 320, 240)


def judgement(page: str, a: str, b: str, r1: str, r2: str) -> dict[str, str]:
    agreed = r1 if r1 == r2 else "disagree"
    return {"page": page, "a": a, "b": b, "rater_1": r1, "rater_2": r2, "consensus": agreed}


ROWS = [
    judgement("p1", "copy", "other", "a", "a"),  # the copy chosen: a metric agrees
    judgement("p2", "other", "copy", "b", "b"),  # the copy chosen, on the right
    judgement("p3", "copy", "other", "b", "b"),  # the other chosen: a metric disagrees
    judgement("p1", "other", "copy", "tie", "tie"),  # a tie: left out
    judgement("p2", "copy", "other", "a", "b"),  # the raters disagree: left out
]


def write_study(
    root: Path, rows: list[dict[str, str]] = ROWS, pages: tuple[str, ...] = ("p1", "p2", "p3")
) -> Path:
    for page in pages:
        folder = root / "pages" / page
        folder.mkdir(parents=True)
        (folder / "original.html").write_text(ORIGINAL)
        (folder / "copy.html").write_text(ORIGINAL + "\n")
        (folder / "other.html").write_text(OTHER)
    lines = "".join(json.dumps(r) + "\n" for r in rows)
    (root / "judgments.jsonl").write_text(lines)
    return root


def drawn(html: bytes) -> bytes:
    """A 48 x 64 still drawn from the page's text: equal text, equal pixels; a page that
    starts like the original looks like it."""
    seed = int(digest_bytes(html.strip())[:8], 16)
    pixels = np.random.default_rng(seed).integers(0, 256, (48, 64, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).save(out, format="PNG")
    return out.getvalue()


class Shooter:
    """Stands in for the browser: counts how often it is opened and what it shoots."""

    def __init__(self) -> None:
        self.opened = 0
        self.shot = 0

    @contextmanager
    def __call__(self) -> Iterator[Shoot]:
        self.opened += 1

        def shoot(html: bytes) -> tuple[bytes, list[dict[str, Any]], str | None]:
            self.shot += 1
            return drawn(html), [], None

        yield shoot


def test_a_study_is_read_with_every_judged_page(tmp_path: Path) -> None:
    study = read_study(write_study(tmp_path))
    assert len(study.judgements) == 5
    assert sorted(study.pages) == [f"{p}/{m}" for p in ("p1", "p2", "p3")
                                   for m in ("copy", "original", "other")]  # fmt: skip
    pairs = consensus(study)
    assert [(p.page, p.winner) for p in pairs] == [("p1", 1), ("p2", -1), ("p3", -1)]


def test_agreement_leaves_out_ties_and_disagreements(tmp_path: Path) -> None:
    study = read_study(write_study(tmp_path))
    shooter = Shooter()
    renders = render_all(study.pages, SMALL, "r", Cache(tmp_path / "cache"), shooter)
    table = agreement_table(consensus(study), study_scores(study, renders))
    for metric in ("content", "image", "ssim"):
        c = table[metric]
        assert (c.agree, c.ties, c.pairs) == (2, 0, 3), metric
        assert c.share == pytest.approx(2 / 3)
        assert c.low <= c.share <= c.high
    assert table["image.ssim"].pairs == 3  # terms are counted on the same pairs


def test_a_metric_tie_counts_half() -> None:
    c = count(np.array([0.5, 0.0, -0.2, np.nan]), np.array([1.0, 1.0, 1.0, -1.0]))
    assert (c.agree, c.ties, c.pairs, c.share) == (1, 1, 3, pytest.approx(0.5))


def test_renders_are_cached_by_page_viewport_and_renderer(tmp_path: Path) -> None:
    study = read_study(write_study(tmp_path))
    cache = Cache(tmp_path / "cache")
    first = Shooter()
    renders = render_all(study.pages, SMALL, "r", cache, first)
    assert (first.opened, first.shot) == (1, 9)
    again = Shooter()
    cached = render_all(study.pages, SMALL, "r", cache, again)
    assert (again.opened, again.shot) == (0, 0)
    assert all(r.cached for r in cached.values())
    assert {k: r.digest for k, r in cached.items()} == {k: r.digest for k, r in renders.items()}
    other = Shooter()
    render_all(study.pages, SMALL, "another renderer", cache, other)
    assert other.shot == 9


def test_preference_rows_one_per_rater(tmp_path: Path) -> None:
    study = read_study(write_study(tmp_path))
    digests = {k: digest_bytes(drawn(p.read_bytes())) for k, p in study.pages.items()}
    rows, same = preferences(study, "real-reconstructions", digests)
    assert same == 0 and len(rows) == 10
    again = [Judgement.model_validate_json(r.model_dump_json()) for r in rows]
    assert again == rows
    first = rows[0]
    assert (first.case, first.point, first.choice) == ("page-p1", "root.desktop.default", "left")
    assert first.left == digests["p1/copy"] and first.right == digests["p1/other"]
    assert [r.choice for r in rows[8:]] == ["left", "right"]  # the disagreement, per rater
    assert len({r.rater for r in rows}) == 2


def one_problem(root: Path) -> str:
    with pytest.raises(ConfigError) as err:
        read_study(root)
    message = str(err.value)
    assert "\n" not in message
    return message


def test_a_missing_page_is_named_with_its_field(tmp_path: Path) -> None:
    rows = [*ROWS[:2], judgement("p3", "copy", "gone", "a", "a")]
    message = one_problem(write_study(tmp_path, rows))
    assert "judgments.jsonl:3: b:" in message
    assert "pages/p3/gone.html does not exist" in message


def test_a_missing_original_is_named(tmp_path: Path) -> None:
    root = write_study(tmp_path)
    (root / "pages" / "p2" / "original.html").unlink()
    message = one_problem(root)
    assert "judgments.jsonl:2: page:" in message and "p2/original.html" in message


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("{not json", "judgments.jsonl:2: malformed JSON"),
        (json.dumps(judgement("p1", "copy", "other", "a", "a") | {"rater_1": "x"}),
         "judgments.jsonl:2: rater_1: must be 'a', 'b' or 'tie'"),
        (json.dumps(judgement("p1", "copy", "other", "a", "a") | {"consensus": "b"}),
         "judgments.jsonl:2: (top level): consensus is 'b' but the raters say 'a' and 'a'"),
        (json.dumps({k: v for k, v in judgement("p1", "a", "b", "a", "a").items() if k != "b"}),
         "judgments.jsonl:2: b: field required"),
    ],
)  # fmt: skip
def test_a_malformed_judgement_is_named_by_line_and_field(
    tmp_path: Path, line: str, expected: str
) -> None:
    root = write_study(tmp_path)
    (root / "judgments.jsonl").write_text(json.dumps(ROWS[0]) + "\n" + line + "\n")
    assert expected in one_problem(root)


def test_a_folder_without_judgements_is_refused(tmp_path: Path) -> None:
    root = write_study(tmp_path)
    (root / "judgments.jsonl").unlink()
    assert "judgments.jsonl: no such file" in one_problem(root)


def test_group_folds_keep_each_page_in_one_fold() -> None:
    pages = [f"p{i % 7}" for i in range(40)]
    fold = group_folds(pages, seed=3)
    assert sorted(set(fold.tolist())) == [0, 1, 2, 3, 4]
    for page in set(pages):
        assert len({int(f) for p, f in zip(pages, fold, strict=True) if p == page}) == 1
    with pytest.raises(ConfigError, match="3 group"):
        group_folds(["a", "b", "c"], seed=0)


@pytest.mark.browser
def test_pages_render_with_the_capture_path(tmp_path: Path) -> None:
    study = read_study(write_study(tmp_path, ROWS[:1]))
    renders = render_all(
        study.pages, SMALL, "r", Cache(tmp_path / "cache"), lambda: browser_shooter(SMALL)
    )
    assert sorted(renders) == ["p1/copy", "p1/original", "p1/other"]
    original, copy, other = renders["p1/original"], renders["p1/copy"], renders["p1/other"]
    assert original.image.shape[1] == 320 and original.failure is None
    assert copy.digest == original.digest != other.digest
    assert any(e.get("text") == "Hello" for e in original.dom)
    scores = study_scores(study, renders)
    assert scores["p1/copy"]["content"] == 1.0 > scores["p1/other"]["content"]
