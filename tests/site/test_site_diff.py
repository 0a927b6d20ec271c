"""``recon site diff`` of the demo before and after a grader edit (issue 14): the page
names the changed input and cells, every moved score and rank and why, and loads in
chromium with no error and no request outside its own file."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from recon.render import open_browser
from recon.site import render
from tests.conftest import Build, clone_built, doit, recon
from tests.release.test_release_semantics import INVERT
from tests.site.browse import overflow, visit

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_site_diff_shows_the_changed_cells_and_scores_of_a_grader_edit(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = clone_built(built_demo[0], tmp_path / "p")
    before = tmp_path / "before"
    shutil.copytree(project / "releases" / "demo", before)
    composer = project / "recon/grade/compose.py"
    assert INVERT[0] in composer.read_text()
    composer.write_text(composer.read_text().replace(*INVERT))
    doit(project, "release:demo")
    out = tmp_path / "diff.html"
    done = recon(project, "site", "diff", str(before), "releases/demo", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.strip()
        == f"wrote {out}: recon diff demo -> demo, 2 moved score(s) or rank(s) explained"
    )
    text = _text(out.read_text())
    assert "code.grade changed" in text
    assert "grade 12 0 0 0" in text  # kind, changed, added, removed, unchanged
    assert "attempt 0 0 0 12" in text  # no agent re-ran
    assert "demo-native.scripted-starter.todomvc.0 changed" in text
    old = {e["entry"]: e for e in json.loads((before / "release.json").read_text())["entries"]}
    for entry, ranks in (("scripted-faithful", "1 → 2"), ("scripted-starter", "2 → 1")):
        # every dimension inverted: the total is 1 minus what it was (the weights sum to 1)
        was = old[entry]["score"]
        delta = render.delta(1.0 - 2 * was)
        assert f"{entry}: score {was:.4f} → {1 - was:.4f} ({delta}), rank {ranks}" in text
    assert "rank : 1 → 2 (order flipped with scripted-starter)" in text
    todo = next(c for c in old["scripted-starter"]["cases"] if c["case"] == "todomvc")["mean"]
    assert (
        f"scripted-starter todomvc {todo:.4f} {1 - todo:.4f} {render.delta(1 - 2 * todo)}" in text
    )
    with open_browser() as browser:
        for width in (390, 1440):
            page = browser.new_page(viewport={"width": width, "height": 900})
            seen = visit(page, out.as_uri())
            assert seen.errors == [] and seen.requests == [out.as_uri()]
            assert overflow(page) == 0
            page.close()


def test_site_diff_of_a_release_with_itself_says_identical(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    out = tmp_path / "same.html"
    done = recon(built_demo[0], "site", "diff", "demo", "demo", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "nothing changed" in out.read_text()
    bad = recon(built_demo[0], "site", "diff", "demo", "nope", "--out", str(out))
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("recon: ") and len(bad.stderr.strip().splitlines()) == 1
