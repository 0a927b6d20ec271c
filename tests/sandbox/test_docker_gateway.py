"""The model gateway through the real container path (issue 24): one gateway per attempt on
the host, its socket on the staging mount, the second loopback bridge, the agent's base-URL
and key variables; every protocol answered and metered; no key in the sandbox."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import docker
import pytest

from recon.agents import CommandAdapter
from recon.agents.gateway import plan_of
from recon.gateway import (
    GatewayConfig,
    Limits,
    ReplayUpstream,
    ScriptedUpstream,
    load_prices,
    prices_digest,
)
from recon.gateway.conversation import chat_view
from recon.gateway.upstream import scripted_usage
from recon.model import Agent, Budget, BuildStep
from recon.model.gateway import GatewayOutcome, Recording, Usage
from recon.sandbox import CONTAINER_PATHS, DockerRun, ImageBuild
from recon.sandbox.gateway import GatewayPlan, agent_env, verdict
from tests.sandbox.conftest import BUDGET, NO_BUILD, attempt

AGENT = Path(__file__).with_name("gateway_agent.py")
CANARY = "sk-canary-0f9d8c7b6a5e4d3c2b1a"
CALLS = ["anthropic", "anthropic-stream", "responses-stream", "chat", "chat-stream",
         "gemini", "gemini-stream"]  # fmt: skip
BASE_URLS = {"ANTHROPIC_BASE_URL": "", "OPENAI_BASE_URL": "/v1", "GOOGLE_GEMINI_BASE_URL": ""}
TOKEN_VARS = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"]


class Said:
    """A script whose reply depends on the request alone: ``said <call>``."""

    def reply(self, request: dict[str, Any]) -> str | None:
        found = re.search(r"say ([a-z-]+)", json.dumps(request))
        return f"said {found.group(1)}" if found else None


def _plan(limits: Limits | None = None) -> GatewayPlan:
    config = GatewayConfig(
        upstream=ScriptedUpstream(Said()),
        prices=load_prices(),
        prices_digest=prices_digest(),
        limits=limits or Limits(),
    )
    return plan_of(config, BASE_URLS, TOKEN_VARS)


def _run(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, plan: GatewayPlan,
    budget: Budget = BUDGET, env: dict[str, str] | None = None, secrets: Sequence[str] = (),
    build: BuildStep = NO_BUILD,
) -> DockerRun:  # fmt: skip
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True)
    shutil.copy2(AGENT, workspace / "agent.py")
    return attempt(
        engine, image, tmp_path, "python3 agent.py probe", budget=budget,
        env=env or {}, secrets=list(secrets), gateway=plan, time_limit_s=120, build=build,
    )  # fmt: skip


def test_the_agent_gets_the_address_and_the_token_only() -> None:
    plan = _plan()
    env = agent_env(plan)
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:3129/v1"
    assert env["ANTHROPIC_BASE_URL"] == env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:3129"
    assert {env[v] for v in TOKEN_VARS} == {plan.token}


@pytest.mark.docker
def test_every_protocol_is_answered_and_metered_through_the_container(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    plan = _plan()
    run = _run(engine, image, tmp_path, plan)
    assert run.outcome == "valid", (run.reason, run.logs[-2000:])
    assert run.output is not None
    for name in CALLS:
        assert (run.output / f"{name}.txt").read_text() == f"said {name}", name
    recording = run.gateway
    assert recording is not None and recording.outcome is None
    assert [e.status for e in recording.exchanges] == [200] * len(CALLS)
    assert [e.stream for e in recording.exchanges] == [False, True, True, False, True, False, True]
    expected = Usage()
    for exchange in recording.exchanges:
        text = Said().reply(chat_view(exchange.protocol, exchange.request))
        assert text is not None
        usage = scripted_usage(exchange.protocol, exchange.request, text)
        assert exchange.usage == usage
        expected = expected + usage
    assert recording.usage == expected  # the gateway's totals: the upstream's, exactly
    assert recording.cost_usd is not None and recording.cost_usd > 0
    environ = (run.output / "environ.bin").read_bytes()
    assert plan.token.encode() in environ  # the token, as each key variable
    assert b"ANTHROPIC_BASE_URL=http://127.0.0.1:3129\0" in environ


@pytest.mark.docker
def test_a_canary_key_reaches_no_byte_of_the_sandbox(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    agent = Agent(
        name="gateway-agent", version="1", command=["python3", "agent.py", "probe"],
        env=["ANTHROPIC_API_KEY", "KEEP"], credentials=["ANTHROPIC_API_KEY"],
        gateway={"ANTHROPIC_BASE_URL": ""},
    )  # fmt: skip
    host = {"ANTHROPIC_API_KEY": CANARY, "KEEP": "kept"}
    prepared = CommandAdapter(agent).prepare(CONTAINER_PATHS, host)
    assert prepared.env == {"KEEP": "kept"} and prepared.secrets == [CANARY, "kept"]
    plan = _plan()
    run = _run(engine, image, tmp_path, plan, env=prepared.env, secrets=prepared.secrets)
    assert run.outcome == "valid", run.reason
    assert run.output is not None
    environ = (run.output / "environ.bin").read_bytes()
    assert f"ANTHROPIC_API_KEY={plan.token}\0".encode() in environ
    assert b"KEEP=kept\0" in environ
    for path in run.output.rglob("*"):
        assert CANARY.encode() not in path.read_bytes(), path
    assert CANARY.encode() not in run.logs
    assert run.gateway is not None
    assert CANARY not in run.gateway.model_dump_json()


@pytest.mark.docker
def test_the_token_budget_stops_the_attempt_with_its_outcome(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    run = _run(engine, image, tmp_path, _plan(Limits(tokens=100)))
    assert run.outcome == "timeout"
    assert run.reason.startswith("model budget: token budget spent: ")
    assert "(budget.tokens)" in run.reason
    assert run.output is None  # no build step, no output: excluded (DESIGN §7)
    assert run.gateway is not None and run.gateway.outcome is not None
    assert run.gateway.outcome.kind == "budget"
    assert run.gateway.exchanges[-1].refused is not None
    assert b"recon gateway: token budget spent" in run.logs


def _recording(outcome: GatewayOutcome | None) -> Recording:
    return Recording(upstream="scripted", prices_digest="0" * 64, exchanges=[], usage=Usage(),
                     cost_usd=0.0, outcome=outcome)  # fmt: skip


def test_verdict_maps_the_gateway_outcome_to_the_attempt() -> None:
    assert verdict(None) is None
    assert verdict(_recording(None)) is None
    spent = GatewayOutcome(kind="budget", reason="token budget spent: 9 of 5 tokens")
    assert verdict(_recording(spent)) == (
        "timeout",
        "model budget: token budget spent: 9 of 5 tokens",
    )
    failed = GatewayOutcome(kind="harness_failure", reason="credentials rejected: X_KEY")
    assert verdict(_recording(failed)) == (
        "harness_failure",
        "harness: gateway: credentials rejected: X_KEY",
    )


@pytest.mark.docker
def test_the_gateway_is_gone_before_the_build_step(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    probe = "import socket; socket.create_connection(('127.0.0.1', 3129), 5)"
    offline = (
        f'test ! -e /recon/gateway.sock && ! python3 -c "{probe}" 2>/dev/null '
        "&& echo offline > dist/offline.txt"
    )
    build = BuildStep(command=["sh", "-c", offline], output="dist")
    run = _run(engine, image, tmp_path, _plan(), build=build)
    assert run.outcome == "valid", (run.reason, run.logs[-1500:])
    assert run.output is not None and (run.output / "offline.txt").read_text() == "offline\n"


@pytest.mark.docker
def test_the_gateways_harness_failure_is_the_attempts(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    config = GatewayConfig(
        upstream=ReplayUpstream.of([]), prices=load_prices(), prices_digest=prices_digest()
    )
    run = _run(engine, image, tmp_path, plan_of(config, BASE_URLS, TOKEN_VARS))
    assert run.outcome == "harness_failure"
    assert run.reason.startswith("harness: gateway: replay: turn 1: the recording holds 0 calls")
    assert run.gateway is not None and run.gateway.outcome is not None
