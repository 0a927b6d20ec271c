"""Codex CLI (``@openai/codex``, installed in the sandbox image from the offline store) end
to end in the docker sandbox, its model the scripted one behind the attempt's gateway
(issue 25): on two cases through the pipeline (valid, the build byte for byte
scripted-faithful-docker's, no key anywhere); and through one container each: a 429 the
gateway retries, a model API that goes away mid-attempt (a harness failure), a model that
never answers (a timeout at ``wall_s``), and its telemetry without the headless switches
(refused by the egress proxy, counted). One image build serves them all."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import docker
import pytest
import yaml

from recon.agents.scripted import ANSWERS, KIND
from recon.agents.tool_script import ToolScripts
from recon.gateway import ScriptedUpstream
from recon.gateway.upstream import Dropped, Outgoing, Reply, json_reply
from recon.model import AttemptRecord, Budget, Pointer
from recon.model.gateway import Recording
from recon.sandbox import DockerRun, ImageBuild
from tests.agents.test_claude_code_docker import PROJECT, _attempt, _config
from tests.agents.test_codex import REPO
from tests.conftest import copy_project
from tests.pipeline.test_gateway_attempt import KEYS, _build_all, _no_key_anywhere
from tests.sandbox.conftest import CREATED, engine, image  # noqa: F401 (fixtures)

ENTRY = PROJECT.entries["codex-scripted"]
CASES = ["html5-boilerplate", "todomvc"]
HEADLESS = [
    "-c analytics.enabled=false -c features.plugins=false",
    "-c check_for_update_on_startup=false",
]
TELEMETRY = {"github.com:443", "api.github.com:443", "chatgpt.com:443", "ab.chatgpt.com:443"}


def _release(project: Path) -> None:
    """``releases/gw.yaml``: codex-scripted and scripted-faithful-docker on ``CASES``."""
    release = {
        "schema_version": 1, "id": "gw", "title": "codex", "cases": CASES,
        "entries": ["codex-scripted", "scripted-faithful-docker"],
        "aggregation": {"rule": "case-mean-v1"},
        "protocol": {"name": "gw-docker", "repeats": 1, "time_limit_s": 300,
                     "backend": "docker", "formal": True, "retry": {"harness_failure": 0}},
    }  # fmt: skip
    (project / "releases" / "gw.yaml").write_text(yaml.safe_dump(release))


@pytest.mark.docker
def test_codex_writes_the_faithful_answer_on_two_cases_and_no_key_leaks(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = copy_project(tmp_path / "p")
    _release(project)
    for name, value in KEYS.items():  # canaries in the host environment: found nowhere
        monkeypatch.setenv(name, value)
    pipeline, pointers = _build_all(project, monkeypatch)
    found: dict[tuple[str, str], tuple[AttemptRecord, Pointer]] = {}
    for pointer in pointers:
        record = AttemptRecord.model_validate(
            pipeline.rt.store.read_json(pointer.outputs["record"].digest)
        )
        found[(record.entry, record.case)] = (record, pointer)
    for case in CASES:
        record, pointer = found[("codex-scripted", case)]
        logs = pipeline.rt.store.read_bytes(pointer.outputs["run"].digest)
        assert record.outcome == "valid", (record.reason, logs[-2000:])
        faithful, faithful_pointer = found[("scripted-faithful-docker", case)]
        assert faithful.outcome == "valid"
        # byte for byte: the same tree digest as scripted-faithful-docker's build
        assert pointer.outputs["build"].digest == faithful_pointer.outputs["build"].digest
        recording = Recording.model_validate(
            pipeline.rt.store.read_json(pointer.outputs["gateway"].digest)
        )
        calls = len(recording.exchanges)
        assert record.model_use is not None and record.model_use.calls == calls
        # Codex's own report: every call but the last one used a tool; the tokens are the
        # gateway's (input with its cached part, and output)
        assert (record.trace.turns, record.trace.tool_calls) == (calls, calls - 1)
        assert record.trace.tokens == sum(
            e.usage.input + e.usage.cache_read + e.usage.output
            for e in recording.exchanges
            if e.usage is not None
        )
        assert record.egress.refused == 0  # headless: nothing phoned home
    _no_key_anywhere(project)
    pipeline.rt.close()


@dataclass
class Flaky:
    """The scripted upstream, but for the requests ``plan`` names by their number (1-based,
    a retry counts): ``429`` answers 429, ``drop`` gives no answer from then on, ``hang``
    never answers."""

    inner: ScriptedUpstream
    plan: dict[int, str]
    kind: str = "scripted"
    credential: None = None
    sent: int = 0
    dropping: bool = False

    async def send(self, out: Outgoing) -> Reply:
        self.sent += 1
        what = self.plan.get(self.sent)
        if what == "429":
            return json_reply(429, {"error": {"message": "slow down"}})
        if what == "drop" or self.dropping:
            self.dropping = True
            raise Dropped("connection reset")
        if what == "hang":
            await asyncio.Event().wait()
        return await self.inner.send(out)

    async def close(self) -> None:
        return None


def _run(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    tmp_path: Path,
    plan: dict[int, str],
    budget: Budget | None = None,
    headless: bool = True,
) -> tuple[DockerRun, Flaky]:
    """Codex on html5-boilerplate in one container (Claude Code's tests' ``_attempt``), its
    gateway's upstream the scripted model as ``plan`` says."""
    scripts = ToolScripts.from_answers(REPO / "entries" / ANSWERS, KIND)
    upstream = Flaky(ScriptedUpstream(_NoText(), tools=scripts), dict(plan))
    agent = ENTRY.agent
    if not headless:
        command = [p.replace(HEADLESS[0], "").replace(HEADLESS[1], "") for p in agent.command]
        assert command != agent.command
        agent = agent.model_copy(update={"command": command})
    entry = ENTRY.model_copy(update={"agent": agent, "budget": budget or ENTRY.budget})
    run = _attempt(engine, image, tmp_path, entry, config=_config(upstream, tries=2))
    if run.container_id:
        CREATED.append(run.container_id)
    return run, upstream


class _NoText:
    def reply(self, request: dict[str, object]) -> str | None:
        raise AssertionError("Codex's request reached the text script")


@pytest.mark.docker
@pytest.mark.parametrize("trouble", ["429 then 200", "gone mid-attempt"])
def test_a_429_is_retried_and_a_model_api_gone_mid_attempt_is_a_harness_failure(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    tmp_path: Path,
    trouble: str,
) -> None:
    run, _ = _run(engine, image, tmp_path, {2: "429"} if trouble == "429 then 200" else {3: "drop"})
    assert run.gateway is not None
    if trouble == "429 then 200":
        assert run.outcome == "valid", (run.reason, run.logs[-2000:])
        assert run.gateway.outcome is None
        statuses = [[t.status for t in e.tries] for e in run.gateway.exchanges]
        assert statuses[1] == [429, 200] and all(s == [200] for s in statuses[:1] + statuses[2:])
        return
    assert run.outcome == "harness_failure", (run.reason, run.logs[-2000:])  # retried next build
    assert "model API unavailable" in run.reason and "retried per protocol" in run.reason
    assert run.gateway.outcome is not None and run.gateway.outcome.kind == "harness_failure"


@pytest.mark.docker
def test_a_model_that_never_answers_is_a_timeout_at_wall_s(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    tmp_path: Path,
) -> None:
    budget = ENTRY.budget.model_copy(update={"wall_s": 20})
    run, upstream = _run(engine, image, tmp_path, {2: "hang"}, budget=budget)
    assert run.outcome == "timeout", (run.reason, run.logs[-2000:])
    assert "20" in run.reason and upstream.sent == 2
    assert run.timings["agent"] >= 20


@pytest.mark.docker
def test_codex_telemetry_is_refused_and_counted_without_the_headless_switches(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    tmp_path: Path,
) -> None:
    run, _ = _run(engine, image, tmp_path, {}, headless=False)
    assert run.outcome == "valid", (run.reason, run.logs[-2000:])
    refused = {e["target"] for e in run.egress["events"] if e["verdict"] == "refused"}
    assert refused == TELEMETRY and run.egress["refused"] >= len(TELEMETRY)
    assert run.egress["allowed"] == 0
