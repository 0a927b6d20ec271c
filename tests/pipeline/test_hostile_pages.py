"""Must-show of issue 27, rendering: hostile pages built in one native release with two
honest entries cost only their own points. The build exits 0, and the honest entries'
grade tables are byte-identical to those of a build without the hostile entries."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from recon.curate.ladder import read_tree
from recon.render.pool import page_failure
from recon.render.session import CRASHED
from tests.conftest import copy_project, doit
from tests.pipeline.scripted import copy_entry, grade_table, write_release

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CASE = "html5-boilerplate"  # one route, three viewports, no workflow: the cheapest case
RELEASE = "hostile-pages"
HOSTILE = {
    # Uncapped, chromium rasterised it for minutes, then the shared browser was gone.
    "hostile-tall": "<div style='height: 1000000px; background: "
    "repeating-linear-gradient(#c33 0 10px, #33c 10px 20px)'>tall</div>",
    "hostile-loop": "<p>before</p><script>while (true) {}</script><p>after</p>",
    "hostile-4gb": "<p id='r'>start</p><script>const a = new Uint8Array(4 * 1024 ** 3); "
    "a.fill(1); document.getElementById('r').textContent = a.length</script>",
    "hostile-heap": "<p>heap</p><script>const k = []; for (;;) k.push(new Array(1e6).fill(1))"
    "</script>",
}


def build(project: Path, hostile: bool, *options: str) -> list[str]:
    """Write the entries and the release, build it (doit ``options`` first); the honest
    entries' ids."""
    answers = project / "entries" / "scripted" / "answers" / CASE
    honest = [
        copy_entry(
            project,
            "honest-reference",
            read_tree(project / "cases" / CASE / "sealed" / "reference"),
        ),
        copy_entry(project, "honest-flawed", read_tree(answers / "flawed")),
    ]
    pages = HOSTILE if hostile else {}
    extra = [copy_entry(project, e, {"index.html": p.encode()}) for e, p in pages.items()]
    write_release(project, RELEASE, CASE, honest + extra)
    doit(project, *options, f"release:{RELEASE}")  # raises unless doit exits 0
    return honest


def grade_digest(project: Path, entry: str) -> str:
    pointer = project / "store" / "cells" / "grade" / f"{RELEASE}.{entry}.{CASE}.0.json"
    return str(json.loads(pointer.read_text())["outputs"]["grade"]["digest"])


def test_hostile_pages_cost_only_their_own_points(tmp_path: Path) -> None:
    alone = copy_project(tmp_path / "alone")
    together = copy_project(tmp_path / "together")
    # Two projects, two stores: the build without the hostile entries runs beside the one
    # with them (whose hostile pages spend most of their time waiting out their bounds),
    # which runs two cells at once as `doit -n 2 -P thread` does (one browser per thread):
    # an honest page may render while a hostile one hangs, crashes or eats its heap.
    with ThreadPoolExecutor(max_workers=1) as beside:
        baseline = beside.submit(build, alone, hostile=False)
        built = build(together, True, "-n", "2", "-P", "thread")
        honest = baseline.result()
    assert built == honest
    for entry in honest:
        assert grade_digest(together, entry) == grade_digest(alone, entry), entry
    assert grade_table(together, RELEASE, "honest-reference", CASE)["total"] == 1.0

    tables = {entry: grade_table(together, RELEASE, entry, CASE) for entry in HOSTILE}
    points = tables["hostile-tall"]["captures"]
    assert points and all("full-page still clipped to" in f for f in points.values()), points
    # A heap that keeps growing crashes its renderer at the heap bound; on a busy machine
    # the page's 3 s script guard can stop it first. Either way only its own points fail.
    crashed = tables["hostile-heap"]["captures"]
    assert crashed and all(
        f == page_failure(CRASHED) or "page script ran past" in f for f in crashed.values()
    ), crashed
    assert "page script ran past" in " ".join(tables["hostile-loop"]["captures"].values())
    release = json.loads((together / "releases" / RELEASE / "release.json").read_text())
    assert {e["entry"] for e in release["entries"]} == set(honest) | set(HOSTILE)
