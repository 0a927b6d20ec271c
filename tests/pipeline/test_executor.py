"""The executors' pieces that need no cluster: what a Ray task asks for, and what a worker
does with a job (idempotent by key, refusing other code), run here in-process."""

from __future__ import annotations

import pytest

from recon.model import CellRecord, Ref
from recon.pipeline.raycluster import resources
from recon.pipeline.runtime import Runtime
from recon.pipeline.tasks import Pipeline
from recon.pipeline.worker import CellJob, Refused, execute
from recon.project.loader import Project
from recon.project.settings import Settings
from tests.conftest import copy_project


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    project = copy_project(tmp_path_factory.mktemp("exec") / "p")
    return Pipeline(Project.open(project, Settings.from_env()))


def _cell(pipeline: Pipeline, kind: str) -> object:
    return next(c for c in pipeline.graph.cells.values() if c.kind == kind)


def test_each_long_kind_asks_for_its_resources(pipeline: Pipeline) -> None:
    cells = pipeline.graph.cells.values()  # the demo's attempts are native (2025q1's docker)
    attempt = next(c for c in cells if c.kind == "attempt" and c.context["release"] == "demo")
    entry = pipeline.project.entries[attempt.params["entry"]]  # type: ignore[attr-defined]
    assert resources(pipeline.rt, attempt) == {  # type: ignore[arg-type]
        "num_cpus": entry.budget.cpus,
        "memory": entry.budget.memory_mb << 20,
    }  # a native attempt: no `docker`
    for kind in ("oracle", "capture", "probe"):
        found = resources(pipeline.rt, _cell(pipeline, kind))  # type: ignore[arg-type]
        assert found == {"num_cpus": 1, "resources": {"browser": 1}}
    assert resources(pipeline.rt, _cell(pipeline, "grade")) == {"num_cpus": 1}  # type: ignore[arg-type]


def _job(rt: Runtime, key: str, code: str | None = None, root: str | None = None) -> CellJob:
    return CellJob(
        root=root or str(rt.project.root), store_root=str(rt.project.store_root),
        sealed_root=None, verify_reads=True, settings=rt.project.settings, kind="grade",
        name="x", params={}, context={}, key=key, code=code or rt.code("grade"),
    )  # fmt: skip


def test_a_worker_returns_a_recorded_key_without_running(pipeline: Pipeline) -> None:
    rt = pipeline.rt
    digest = rt.store.put_json({"grade": "already"})
    key = "ab" * 32
    record = CellRecord(kind="grade", name="x", key=key, inputs={}, duration_s=1.0,
                        outputs={"grade": Ref(digest=digest)})  # fmt: skip
    rt.cache.put(key, record.model_dump(mode="json"))
    done = execute(_job(rt, key))  # no inputs: computing would fail at once
    assert not isinstance(done, Refused), done
    assert done.reused and done.outputs == {"grade": Ref(digest=digest)}  # type: ignore[union-attr]


def test_a_worker_refuses_other_code_and_a_missing_checkout(pipeline: Pipeline) -> None:
    rt = pipeline.rt
    other = execute(_job(rt, "cd" * 32, code="0" * 64))
    assert isinstance(other, Refused) and "differs from the coordinator's" in other.message
    gone = execute(_job(rt, "cd" * 32, root="/nonexistent/recon"))
    assert isinstance(gone, Refused) and "no /nonexistent/recon" in gone.message
