"""A real published coding-agent CLI (mini-swe-agent, installed in the sandbox image from
the offline wheel store) driven end to end through a formal release: a scripted
OpenAI-compatible model server on 127.0.0.1 is reached only through the egress proxy, the
build is extracted, captured and graded. Entries whose API cannot be reached here (Claude
Code, Codex CLI) become harness failures saying "credentials missing"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from recon.agents import FixedScript, ModelServer, serve_model
from recon.model import AttemptRecord, RunRecord
from recon.sandbox import ImageBuild, deps
from recon.store import Store
from tests.conftest import copy_project, deps_root, doit, free_port
from tests.sandbox.conftest import engine, image  # noqa: F401  (fixtures)

SECRET = "sk-scripted-5f1e0c2a9b7d"
PAGE = (
    '<!doctype html>\\n<html lang="en">\\n<head>\\n<meta charset="utf-8">\\n<title></title>\\n'
    "</head>\\n<body>\\n  <p>Hello world! This is HTML5 Boilerplate.</p>\\n</body>\\n</html>\\n"
)
REPLIES = [
    "THOUGHT: is anything else reachable?\n\n```bash\n"
    "python3 -c \"import urllib.request as u; u.urlopen('https://api.not-allowed.example/v1')\""
    " || echo refused\n```",
    f"THOUGHT: write the page.\n\n```bash\nmkdir -p site && printf '{PAGE}' > site/index.html\n```",
    "THOUGHT: done.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
]
RELEASE = """schema_version: 1
id: formal-agents
title: Agent CLIs in the docker sandbox (formal)
cases: [html5-boilerplate]
entries: [mini-swe-agent-scripted, claude-code, codex-cli]
protocol:
  name: formal-docker
  repeats: 1
  time_limit_s: 240
  backend: docker
  formal: true
  retry: {harness_failure: 0}
"""


@pytest.fixture
def model() -> Iterator[ModelServer]:
    """The test's own scripted model (its replies probe the egress proxy first); the entry's
    provider is renamed in the project copy so that the build does not start its own."""
    with serve_model(FixedScript(REPLIES), SECRET) as served:
        yield served


def _record(project: Path, entry: str) -> tuple[AttemptRecord, RunRecord, dict[str, Any], Store]:
    store = Store(project / "store")
    [pointer] = (project / "store" / "cells" / "attempt").glob(f"*.{entry}.*.json")
    outputs = json.loads(pointer.read_text())["outputs"]
    record = AttemptRecord.model_validate(store.read_json(outputs["record"]["digest"]))
    run = RunRecord.model_validate(store.read_json(outputs["run"]["digest"]))
    return record, run, outputs, store


@pytest.mark.docker
@pytest.mark.slow
def test_mini_swe_agent_formal_release_through_the_egress_proxy(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    model: ModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = model.port
    project = copy_project(tmp_path / "project")
    entry = project / "entries" / "mini-swe-agent-scripted.yaml"
    text = entry.read_text().replace("127.0.0.1:18080", f"127.0.0.1:{port}")
    entry.write_text(text.replace("provider: scripted,", "provider: test-scripted,"))
    (project / "releases" / "formal-agents.yaml").write_text(RELEASE)
    monkeypatch.setenv("RECON_DEPS", str(deps.require(deps_root()).parent))
    monkeypatch.setenv("SCRIPTED_MODEL_KEY", SECRET)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    doit(project, "release:formal-agents")

    # the agent talked to the allow-listed model host only, with the forwarded key
    assert len(model.requests) == 3
    assert model.authorization == [f"Bearer {SECRET}"] * 3
    record, run, outputs, store = _record(project, "mini-swe-agent-scripted")
    assert record.outcome == "valid", (record.reason, store.read_bytes(run.logs)[-3000:])
    assert record.formal and record.backend == "docker" and run.image_id
    assert record.egress.allowed >= 1 and record.egress.refused == 1
    assert run.egress_events is not None
    events = store.read_json(run.egress_events)
    assert {e["target"] for e in events if e["verdict"] == "refused"} == {
        "api.not-allowed.example:443"
    }
    assert {e["target"] for e in events if e["verdict"] == "allowed"} == {f"127.0.0.1:{port}"}
    assert (record.trace.turns, record.trace.tool_calls, record.trace.tokens) == (3, 3, 360)
    # the key reached the model server and nothing the harness wrote
    logs = store.read_bytes(run.logs)
    assert b"mini-swe-agent" in logs and SECRET.encode() not in logs
    assert SECRET not in json.dumps(record.model_dump(mode="json"))
    for path in (project / "store").rglob("*"):
        if path.is_file() and path.stat().st_size < 50_000_000:
            assert SECRET.encode() not in path.read_bytes(), path
    # the build was extracted, captured and graded
    assert outputs["build"]["type"] == "tree"
    result = json.loads((project / "releases" / "formal-agents" / "release.json").read_text())
    assert result["formal"] is True
    by_entry = {a["entry"]: a for a in result["attempts"]}
    mini = by_entry["mini-swe-agent-scripted"]
    assert mini["outcome"] == "valid" and mini["total"] is not None and mini["total"] > 0
    assert mini["trace"] == {"turns": 3, "tool_calls": 3, "tokens": 360}

    # agents whose API cannot be reached: harness failures, decided before any container
    for name, key in (("claude-code", "ANTHROPIC_API_KEY"), ("codex-cli", "OPENAI_API_KEY")):
        failed, failed_run, _, _ = _record(project, name)
        assert failed.outcome == "harness_failure"
        assert "credentials missing" in failed.reason and key in failed.reason
        assert failed_run.duration_s == 0.0 and store.read_bytes(failed_run.logs) == b""
        assert by_entry[name]["outcome"] == "harness_failure" and by_entry[name]["total"] is None
    assert result["reliability"]["overall"]["by_outcome"]["harness_failure"] == 2


SERVED = """schema_version: 1
id: served-model
title: mini-swe-agent against the scripted model the build serves (formal)
cases: [html5-boilerplate]
entries: [mini-swe-agent-scripted, scripted-faithful-docker]
protocol:
  name: served-docker
  repeats: 1
  time_limit_s: 240
  backend: docker
  formal: true
  retry: {harness_failure: 0}
"""


@pytest.mark.docker
@pytest.mark.slow
def test_the_build_serves_the_scripted_model_itself(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No server of the test's and no key in the environment: the attempt starts the
    scripted model on the port its entry names, issues the key, and mini-swe-agent writes
    the case's faithful answer through bash, byte for byte the build of scripted-faithful."""
    port = free_port()
    project = copy_project(tmp_path / "project")
    entry = project / "entries" / "mini-swe-agent-scripted.yaml"
    entry.write_text(entry.read_text().replace("127.0.0.1:18080", f"127.0.0.1:{port}"))
    (project / "releases" / "served-model.yaml").write_text(SERVED)
    monkeypatch.setenv("RECON_DEPS", str(deps.require(deps_root()).parent))
    monkeypatch.delenv("SCRIPTED_MODEL_KEY", raising=False)

    doit(project, "release:served-model")

    record, run, outputs, store = _record(project, "mini-swe-agent-scripted")
    assert record.outcome == "valid", (record.reason, store.read_bytes(run.logs)[-3000:])
    answer = project / "entries" / "scripted" / "answers" / "html5-boilerplate" / "faithful"
    files = len([p for p in answer.rglob("*") if p.is_file()])
    # read the brief, one turn a file, submit
    turns = files + 2
    assert (record.trace.turns, record.trace.tool_calls, record.trace.tokens) == (
        turns, turns, 120 * turns,
    )  # fmt: skip
    assert record.egress.allowed >= 1 and record.egress.refused == 0
    faithful, _, faithful_outputs, _ = _record(project, "scripted-faithful-docker")
    assert faithful.outcome == "valid"
    assert outputs["build"]["digest"] == faithful_outputs["build"]["digest"]
