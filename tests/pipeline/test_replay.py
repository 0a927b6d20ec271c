"""``recon replay`` (issue 24): an attempt re-run from its gateway recording, offline, gives
byte-identical build output; a recording that no longer fits is a harness failure naming
the turn; the attempt's pointer, record and objects are never touched.

One gateway attempt (``tests/pipeline/test_gateway_attempt.py``'s entry, one case) is built
once for the module; its agent drops ``environ.bin`` (the agent's environment holds the
attempt's token and the container's host name, which differ on every run)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from recon.cli import main
from recon.model import Pointer
from recon.model.gateway import Recording
from recon.pipeline.check import scratch_runtime
from recon.pipeline.replay import (
    EXITS,
    Side,
    answered,
    compare,
    differing,
    recorded,
    replay,
)
from recon.pipeline.runtime import Cell
from recon.pipeline.tasks import Pipeline
from recon.store import checkout_tree
from tests.conftest import copy_project, doit_env
from tests.pipeline.test_gateway_attempt import KEYS, _attempts, _build, _project

QUIET = ["sh", "-c", "{python} {entry_dir}/gateway/agent.py solve {brief} && rm site/environ.bin"]


@dataclass
class Built:
    project: Path
    pipeline: Pipeline
    cell: Cell
    pointer: Pointer


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    tmp = tmp_path_factory.mktemp("replay")
    project = _project(tmp)
    path = project / "entries" / "gateway-scripted.yaml"
    entry = yaml.safe_load(path.read_text())
    entry["agent"]["command"] = QUIET
    path.write_text(yaml.safe_dump(entry))
    with pytest.MonkeyPatch.context() as mp:  # the build's environment, for the build only
        pipeline, pointer = _build(project, mp)
    record = pipeline.rt.store.read_json(pointer.outputs["record"].digest)
    assert "build" in pointer.outputs, record["reason"]
    (cell,) = _attempts(pipeline, "gw")
    yield Built(project, pipeline, cell, pointer)
    pipeline.rt.close()


@pytest.fixture
def offline(built: Built, monkeypatch: pytest.MonkeyPatch) -> Built:
    """The built project, its store and the offline dependency store named, and no model
    key in the environment."""
    monkeypatch.setenv("RECON_STORE", str(built.project / "store"))
    monkeypatch.setenv("RECON_DEPS", doit_env(built.project)["RECON_DEPS"])
    for name in KEYS:
        monkeypatch.delenv(name, raising=False)
    return built


def _store_state(project: Path) -> dict[str, bytes]:
    """Every pointer, action record and object of the store (not its caches)."""
    store = project / "store"
    return {
        str(p.relative_to(store)): p.read_bytes()
        for p in sorted(store.rglob("*"))
        if p.is_file() and p.relative_to(store).parts[0] not in ("state", "deps")
    }


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.docker
def test_a_replay_gives_the_byte_identical_build_offline(
    offline: Built, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build = offline.pointer.outputs["build"].digest
    before = _store_state(offline.project)
    out = tmp_path / "replayed"
    code = main(["--root", str(offline.project), "replay", offline.cell.name, "--out", str(out)])
    printed = capsys.readouterr()
    assert (code, printed.out) == (0, f"identical build {build}\n"), printed.err
    assert f"replaying {offline.cell.name}: recorded valid, " in printed.err
    stored = tmp_path / "stored"
    checkout_tree(offline.pipeline.rt.store, build, stored)
    assert _files(out) == _files(stored) and len(_files(stored)) >= 5
    assert _store_state(offline.project) == before  # nothing stored, nothing moved


@pytest.mark.docker
def test_a_build_that_holds_the_token_differs_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path)  # the agent keeps its environment: token, host name
    pipeline, _ = _build(project, monkeypatch)
    (cell,) = _attempts(pipeline, "gw")
    pipeline.rt.close()
    for name in KEYS:
        monkeypatch.delenv(name)
    code = main(["--root", str(project), "replay", cell.name])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[0].startswith("different build: 1 file(s) differ (recorded ")
    assert lines[1:] == ["  differs: environ.bin"]


def _recording(built: Built) -> tuple[dict[str, str], Side, Recording]:
    inputs, side, recording = recorded(built.pipeline.rt, built.cell)
    assert side.outcome == "valid" and side.calls == answered(recording) >= 7
    return inputs, side, recording


def _replayed(built: Built, recording: Recording) -> tuple[int, str]:
    inputs, before, _ = _recording(built)
    with scratch_runtime(built.pipeline.rt) as again:
        after, _ = replay(again, built.cell, inputs, recording)
    found = compare(before, after)
    return EXITS[found.verdict], found.line


@pytest.mark.docker
def test_a_recording_of_another_model_ends_at_its_turn(offline: Built) -> None:
    _, _, recording = _recording(offline)
    second = recording.exchanges[1].model_copy(update={"model": "claude-opus-4-1"})
    tampered = recording.model_copy(
        update={"exchanges": [recording.exchanges[0], second, *recording.exchanges[2:]]}
    )
    code, line = _replayed(offline, tampered)
    assert code == 3
    held = recording.exchanges[1].model
    assert line == (
        f"harness failure: gateway: replay: turn 2: asks model {held!r}, the recording "
        "holds 'claude-opus-4-1'"
    )


@pytest.mark.docker
def test_a_recording_with_a_turn_removed_ends_at_that_turn(offline: Built) -> None:
    _, _, recording = _recording(offline)
    kept = recording.exchanges[:-1]
    code, line = _replayed(offline, recording.model_copy(update={"exchanges": kept}))
    assert code == 3
    assert line == (
        f"harness failure: gateway: replay: turn {len(kept) + 1}: the recording holds "
        f"{len(kept)} calls; the agent made more"
    )


@pytest.mark.docker
def test_an_unbuilt_or_since_changed_attempt_is_refused_exit_2(
    offline: Built, capsys: pytest.CaptureFixture[str]
) -> None:
    root = ["--root", str(offline.project), "replay"]
    unbuilt = "2025q1-docker.scripted-faithful-docker.clean-blog.0"
    assert main([*root, unbuilt, "--release", "2025q1"]) == 2
    assert capsys.readouterr().err == (
        f"recon: {unbuilt}: not built yet; run `doit release:2025q1` first\n"
    )
    path = offline.project / "entries" / "gateway-scripted.yaml"
    pinned = path.read_text()
    entry = yaml.safe_load(pinned)
    entry["budget"]["wall_s"] += 1  # another entry pin: another attempt than the recorded one
    path.write_text(yaml.safe_dump(entry))
    try:
        assert main([*root, offline.cell.name]) == 2
    finally:
        path.write_text(pinned)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "changed since it was recorded; rebuild it" in err


def test_a_bad_attempt_id_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = copy_project(tmp_path / "p")
    code = main(["--root", str(project), "replay", "docker-v1.no-such-entry.clean-blog.0"])
    printed = capsys.readouterr()
    assert code == 2 and printed.out == ""
    assert printed.err.count("\n") == 1
    assert printed.err.startswith("recon: docker-v1.no-such-entry.clean-blog.0: unknown attempt")


def _side(outcome: str = "valid", tree: str | None = "a" * 64, calls: int = 9) -> Side:
    return Side(outcome, "why", tree, calls)  # type: ignore[arg-type]


def test_the_same_outcome_and_tree_is_identical() -> None:
    found = compare(_side(), _side())
    assert (found.verdict, found.line) == ("identical", f"identical build {'a' * 64}")
    timed_out = compare(_side("timeout", None), _side("timeout", None))
    assert timed_out.line == "identical timeout output (none)"


def test_another_tree_names_each_differing_file() -> None:
    files = ({"index.html": "1", "a.css": "2", "gone.js": "3"}, {"index.html": "1",
             "a.css": "9", "new.js": "4"})  # fmt: skip
    found = compare(_side(), _side(tree="b" * 64), files)
    assert found.verdict == "different" and EXITS[found.verdict] == 1
    assert found.files == ["a.css", "gone.js", "new.js"]
    assert found.line == (
        "different build: 3 file(s) differ (recorded aaaaaaaaaaaa, replayed bbbbbbbbbbbb)"
    )


def test_another_outcome_is_different_and_a_harness_failure_wins() -> None:
    moved = compare(_side(), _side("ungradeable", None))
    assert moved.verdict == "different"
    assert moved.line == "different outcome: recorded valid, replayed ungradeable (why)"
    failed = Side("harness_failure", "harness: gateway: replay: turn 4: x", None, 3)
    assert compare(_side(), failed).line == "harness failure: gateway: replay: turn 4: x"


def test_fewer_calls_than_recorded_is_a_harness_failure_naming_the_next_turn() -> None:
    found = compare(_side(calls=9), _side(calls=6))
    assert EXITS[found.verdict] == 3
    assert found.line == (
        "harness failure: gateway: replay: turn 7: the agent stopped after 6 call(s); "
        "the recording holds 9"
    )


def test_differing_lists_changed_and_one_sided_paths() -> None:
    assert differing({"a": "1", "b": "2"}, {"a": "1", "b": "2"}) == []
    assert differing({"a": "1"}, {"b": "1"}) == ["a", "b"]
