"""Whatever a backend raises becomes the attempt's record, never a traceback (issue 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.errors import HarnessError
from recon.model import AttemptRecord
from recon.pipeline.cells import run_cell, walk
from recon.pipeline.project import Project
from recon.pipeline.tasks import Pipeline
from tests.conftest import copy_project


@pytest.mark.parametrize(
    ("raised", "reason"),
    [
        (HarnessError("egress proxy: socket vanished"), "harness: egress proxy: socket vanished"),
        (RuntimeError("proxy loop closed"), "harness bug: RuntimeError: proxy loop closed"),
        (ValueError("bad budget arithmetic"), "harness bug: ValueError: bad budget arithmetic"),
    ],
)
def test_a_backend_exception_is_a_retried_harness_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: Exception, reason: str
) -> None:
    project = copy_project(tmp_path / "p")
    monkeypatch.setenv("RECON_STORE", str(project / "store"))
    pipeline = Pipeline(Project.open(project))
    # a native attempt (the demo's): the backend patched below is the native one
    cell = next(c for c in walk([pipeline.roots["demo"]]) if c.kind == "attempt")

    def backend(*_: object, **__: object) -> None:
        raise raised

    monkeypatch.setattr("recon.pipeline.kinds.attempt.run_native", backend)
    assert run_cell(pipeline.rt, cell) == "ran"
    pointer = pipeline.rt.require_pointer(cell)
    record = AttemptRecord.model_validate(
        pipeline.rt.store.read_json(pointer.outputs["record"].digest)
    )
    assert record.outcome == "harness_failure" and record.reason.startswith(reason)
    assert pointer.retry is True and "build" not in pointer.outputs
    assert not pipeline.rt.cache.has(pointer.key)  # nothing finished: run again next build
    pipeline.rt.close()
