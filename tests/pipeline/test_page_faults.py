"""A page that breaks the browser (PageError, recon.render.pool) costs a Candidate's build
only the points and checks it broke; a case's own page fails its cell (issue 27).

The kinds run on a real project's cells and store, with the browser replaced by a job
runner that raises what the pool raises for such a page: no chromium here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recon.errors import HarnessError, PageError
from recon.model.captures import PointCapture, PointFiles, ProbeResults
from recon.model.matrix import Point
from recon.pipeline.kinds.probe import probe
from recon.pipeline.kinds.render import capture, oracle
from recon.pipeline.runtime import Cell, walk
from recon.pipeline.tasks import Pipeline
from recon.project.loader import Project
from recon.project.settings import Settings
from recon.render.pool import BrowserPool, page_failure
from recon.render.session import CRASHED, blank_png
from recon.store import put_files, tree_files
from tests.conftest import copy_project

REASON = page_failure(CRASHED)


@pytest.fixture
def pipeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Pipeline:
    project = copy_project(tmp_path / "p")
    monkeypatch.setenv("RECON_STORE", str(project / "store"))
    pipeline = Pipeline(Project.open(project, Settings.from_env()))

    def broken(_job: object) -> Any:
        raise PageError(REASON)

    monkeypatch.setattr(pipeline.rt.shared(BrowserPool), "run", broken)
    return pipeline


def cell_of(pipeline: Pipeline, kind: str, *, candidate: bool) -> Cell:
    return next(
        c
        for c in walk([pipeline.roots["demo"]])
        if c.kind == kind and ("attempt" in c.deps) == candidate
    )


def build(pipeline: Pipeline) -> str:
    return put_files(pipeline.rt.store, {"index.html": b"<p>hostile</p>"})


def test_a_candidate_point_that_broke_the_browser_is_a_failed_point(pipeline: Pipeline) -> None:
    cell = cell_of(pipeline, "capture", candidate=True)
    store = pipeline.rt.store
    made = capture(pipeline.rt, cell, {"attempt.build": build(pipeline)})
    files = tree_files(store, made.outputs["captures"].digest)
    points = [Point.from_params(raw) for raw in cell.params["points"]]
    assert points
    for point in points:
        pid = point.id
        record = PointCapture.model_validate_json(
            store.read_bytes(files[PointFiles.path(pid, PointFiles.RECORD)].digest)
        )
        assert record.failure == REASON and record.stability.status == "unproven"
        assert record.network == [] and record.console == []
        assert (
            json.loads(store.read_bytes(files[PointFiles.path(pid, PointFiles.DOM)].digest)) == []
        )
        full = store.read_bytes(files[PointFiles.path(pid, PointFiles.FULL)].digest)
        assert full == blank_png(point.viewport)


def test_a_candidate_probe_that_broke_the_browser_fails_its_checks(pipeline: Pipeline) -> None:
    cell = cell_of(pipeline, "probe", candidate=True)
    made = probe(pipeline.rt, cell, {"attempt.build": build(pipeline)})
    results = ProbeResults.model_validate(
        pipeline.rt.store.read_json(made.outputs["results"].digest)
    )
    rows = [r for viewport in results.assertions.values() for r in viewport] + results.preservation
    assert rows and all(not r.passed and r.observed == REASON for r in rows)
    grading = pipeline.rt.project.cases[cell.params["case"]].grading
    assert results.workflows == {}
    assert results.failures == {wf.id: REASON for wf in grading.workflows}


def test_a_case_page_that_broke_the_browser_fails_its_cell(pipeline: Pipeline) -> None:
    reference = next(c for c in walk([pipeline.roots["demo"]]) if c.kind == "oracle")
    with pytest.raises(HarnessError, match=f"case {reference.params['case']}: its page at"):
        oracle(pipeline.rt, reference, {"reference": build(pipeline)})
    starter = cell_of(pipeline, "capture", candidate=False)
    with pytest.raises(HarnessError, match=REASON.replace("(", r"\(").replace(")", r"\)")):
        capture(pipeline.rt, starter, {"build": build(pipeline)})
    starter_probe = cell_of(pipeline, "probe", candidate=False)
    with pytest.raises(HarnessError, match="its page, probing checks at"):
        probe(pipeline.rt, starter_probe, {"build": build(pipeline)})
