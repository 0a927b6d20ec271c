"""Whatever a backend raises becomes the attempt's record, never a traceback (issue 10), and
so does whatever fails after it returned: storing its output, writing the record (issue 27)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from recon.errors import HarnessError
from recon.model import AttemptRecord, Pointer, Trace
from recon.pipeline.cells import run_cell
from recon.pipeline.kinds import attempt as attempt_kind
from recon.pipeline.runtime import Cell, walk
from recon.pipeline.tasks import Pipeline
from recon.project.loader import Project
from recon.project.settings import Settings
from recon.sandbox import AttemptRun
from recon.store import DiskFull
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
    pipeline = Pipeline(Project.open(project, Settings.from_env()))
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


def _one_attempt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Pipeline, Cell]:
    project = copy_project(tmp_path / "p")
    monkeypatch.setenv("RECON_STORE", str(project / "store"))
    pipeline = Pipeline(Project.open(project, Settings.from_env()))
    return pipeline, next(c for c in walk([pipeline.roots["demo"]]) if c.kind == "attempt")


def _record(pipeline: Pipeline, cell: Cell) -> tuple[AttemptRecord, Pointer]:
    pointer = pipeline.rt.require_pointer(cell)
    digest = pointer.outputs["record"].digest
    return AttemptRecord.model_validate(pipeline.rt.store.read_json(digest)), pointer


def _valid_with(make: Callable[[Path], None]) -> Callable[..., AttemptRun]:
    """A native backend that answers ``valid`` with an output ``make`` filled, as a backend
    that let something through would."""

    def backend(*_: object, out: Path, **__: object) -> AttemptRun:
        out.mkdir()
        (out / "index.html").write_text("<h1>hi</h1>")
        make(out)
        return AttemptRun("valid", "submitted a build", 0, 0.1, b"", out, Trace())

    return backend


LET_THROUGH: dict[str, tuple[Callable[[Path], None], str]] = {
    "non-utf8-name": (
        lambda out: (out / os.fsdecode(b"bad\xff.html")).write_text("x"),
        "bad\\xff.html: name is not valid UTF-8",
    ),
    "symlink": (
        lambda out: os.symlink("index.html", out / "alias.html"),
        "alias.html: not a regular file or folder (symlink or device)",
    ),
    "fifo": (
        lambda out: os.mkfifo(out / "pipe"),
        "pipe: not a regular file or folder (symlink or device)",
    ),
}


@pytest.mark.parametrize(("make", "refusal"), LET_THROUGH.values(), ids=LET_THROUGH.keys())
def test_an_output_the_store_cannot_hold_is_ungradeable_naming_the_path(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    make: Callable[[Path], None],
    refusal: str,
) -> None:
    pipeline, cell = _one_attempt(tmp_path, monkeypatch)
    monkeypatch.setattr("recon.pipeline.kinds.attempt.run_native", _valid_with(make))
    assert run_cell(pipeline.rt, cell) == "ran"
    record, pointer = _record(pipeline, cell)
    assert record.outcome == "ungradeable"
    assert record.reason == f"the build output was refused: {refusal}"
    assert record.refusals == [refusal]
    assert "build" not in pointer.outputs and "partial" not in pointer.outputs
    assert pointer.retry is False and pipeline.rt.cache.has(pointer.key)  # final, not retried
    pipeline.rt.close()


def _storing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError
) -> tuple[Pipeline, Cell]:
    """One valid native attempt whose build output the store fails to take with ``error``."""
    pipeline, cell = _one_attempt(tmp_path, monkeypatch)
    monkeypatch.setattr("recon.pipeline.kinds.attempt.run_native", _valid_with(lambda _: None))

    def failing(*_: object) -> str:
        raise error

    monkeypatch.setattr("recon.pipeline.kinds.attempt.put_tree", failing)
    return pipeline, cell


def test_a_store_that_fails_on_the_output_is_a_retried_harness_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline, cell = _storing_fails(tmp_path, monkeypatch, OSError(5, "Input/output error"))
    assert run_cell(pipeline.rt, cell) == "ran"
    record, pointer = _record(pipeline, cell)
    assert record.outcome == "harness_failure"
    assert record.reason.startswith(
        "harness: storing the build output failed: [Errno 5] Input/output error"
    )
    assert pointer.retry is True and not pipeline.rt.cache.has(pointer.key)
    pipeline.rt.close()


def test_a_full_disk_under_the_store_stops_the_build_instead_of_recording_the_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline, cell = _storing_fails(tmp_path, monkeypatch, OSError(28, "No space left on device"))
    # The store's disk, not the attempt: the build stops with one error naming the disk,
    # and nothing is recorded (a harness-failure record would be lost to the same disk).
    with pytest.raises(DiskFull, match="no space left on the disk holding"):
        run_cell(pipeline.rt, cell)
    assert pipeline.rt.read_pointer(cell) is None
    pipeline.rt.close()


def test_a_record_that_cannot_be_written_becomes_a_harness_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline, cell = _one_attempt(tmp_path, monkeypatch)
    monkeypatch.setattr("recon.pipeline.kinds.attempt.run_native", _valid_with(lambda _: None))
    real = attempt_kind.RunRecord
    calls: list[int] = []

    def once_broken(**fields: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            "\udcff".encode()  # what a stray surrogate does to canonical JSON
        return real(**fields)  # type: ignore[arg-type]

    monkeypatch.setattr(attempt_kind, "RunRecord", once_broken)
    assert run_cell(pipeline.rt, cell) == "ran"
    record, pointer = _record(pipeline, cell)
    assert record.outcome == "harness_failure"
    assert record.reason.startswith("harness bug: UnicodeEncodeError: 'utf-8' codec")
    assert pointer.retry is True and "build" not in pointer.outputs
    pipeline.rt.close()
