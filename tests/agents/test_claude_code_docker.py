"""Claude Code (the sandbox image's, from the offline store) end to end in the docker
sandbox, driven by the scripted model through the attempt's gateway: the entries' own
command, environment and gateway plan, the case's own workspace and build step, exactly as
a formal attempt runs them (``recon.pipeline.kinds.attempt._docker``), without grading.

One image build (the session fixture) serves every test here."""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
import pytest

from recon.agents import CommandAdapter
from recon.agents.gateway import gateway_plan, plan_of
from recon.agents.model_server import CaseScripts
from recon.agents.scripted import ANSWERS, KIND
from recon.agents.tool_script import FINISHED, ToolScripts
from recon.gateway import GatewayConfig, LiveSettings, ScriptedUpstream, load_prices
from recon.gateway.failures import RetryPolicy
from recon.gateway.prices import prices_digest
from recon.gateway.upstream import Dropped, Outgoing, Reply, json_reply
from recon.model import Budget, Entry
from recon.pipeline.project import Project
from recon.sandbox import DockerRun, ImageBuild, container_placeholders, deps, entry_mount
from recon.sandbox import run_docker as run_in_docker
from tests.gateway.conftest import (  # noqa: F401 (test_ca and server_tls: fixtures)
    CertAuthority,
    Vendor,
    key_forms,
    server_tls,
    test_ca,
    vendor_api,
)
from tests.sandbox.conftest import engine, image  # noqa: F401 (fixtures)

REPO = Path(__file__).resolve().parents[2]
PROJECT = Project.open(REPO)
ANSWERS_DIR = PROJECT.entries_dir / ANSWERS
SCRIPTED = "claude-code-scripted"
HEADLESS = ("DISABLE_AUTOUPDATER", "DISABLE_TELEMETRY", "DISABLE_ERROR_REPORTING",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")  # fmt: skip
CANARY = b"sk-ant-canary+3c/9e=a17b5d20"


def _scripted_upstream() -> ScriptedUpstream:
    return ScriptedUpstream(
        CaseScripts.from_answers(ANSWERS_DIR, KIND),
        tools=ToolScripts.from_answers(ANSWERS_DIR, KIND),
    )


def _workspace(case: str, dest: Path) -> Path:
    """The Candidate workspace of ``case`` under the ``full`` condition (what
    ``compose_workspace`` makes): the starter, the brief, the contract and the evidence."""
    public = REPO / "cases" / case / "public"
    shutil.copytree(public / "starter", dest)
    for name in ("brief.md", "contract.yaml"):
        shutil.copy2(public / name, dest / name)
    shutil.copytree(public / "evidence", dest / "evidence")
    return dest


def _attempt(
    client: docker.DockerClient,
    built: ImageBuild,
    tmp_path: Path,
    entry: Entry,
    case: str = "html5-boilerplate",
    *,
    config: GatewayConfig | None = None,
    environ: dict[str, str] | None = None,
    live: LiveSettings | None = None,
    time_limit_s: int = 240,
) -> DockerRun:
    environ = environ or {}
    adapter = CommandAdapter(entry.agent)
    limit = min(time_limit_s, entry.budget.wall_s)
    agent = adapter.prepare(container_placeholders(limit), environ)
    plan = None
    if entry.agent.gateway:
        plan = (
            plan_of(config, entry.agent.gateway, entry.agent.credentials)
            if config is not None
            else gateway_plan(entry, PROJECT.entries_dir, environ, live=live)
        )
    run = run_in_docker(
        _workspace(case, tmp_path / "workspace"), agent.command, entry.budget, time_limit_s,
        built.tag, build=PROJECT.cases[case].contract.build, out=tmp_path / "out",
        egress=entry.sandbox.egress, env=agent.env, secrets=agent.secrets,
        deps=deps.require(), trace_file=agent.trace_file, client=client,
        mounts=[entry_mount(PROJECT.entries_dir, entry, tmp_path / "entry")], gateway=plan,
    )  # fmt: skip
    run.trace = adapter.trace(run.logs, run.trace_file)
    return run


def _config(upstream: Any, tries: int = 3) -> GatewayConfig:
    return GatewayConfig(
        upstream=upstream,
        prices=load_prices(),
        prices_digest=prices_digest(),
        retry=RetryPolicy(tries=tries, base_s=0.05, cap_s=0.05),
    )


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _differs(mine: dict[str, bytes], theirs: dict[str, bytes]) -> str:
    for name in sorted(set(mine) | set(theirs)):
        a, b = mine.get(name), theirs.get(name)
        if a != b:
            if a is None or b is None:
                return f"{name}: only in {'scripted-faithful-docker' if a is None else 'claude'}"
            at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
            at = min(len(a), len(b)) if at is None else at
            return f"{name}: byte {at} differs ({a[at : at + 20]!r} vs {b[at : at + 20]!r})"
    return ""


def _failed(run: DockerRun) -> str:
    return f"{run.outcome}: {run.reason}\n{run.logs[-3000:].decode(errors='replace')}"


@pytest.mark.docker
@pytest.mark.parametrize("case", ["html5-boilerplate", "todomvc"])
def test_claude_code_writes_the_faithful_answer_through_its_own_tools(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    tmp_path: Path,
    case: str,
) -> None:
    entry = PROJECT.entries[SCRIPTED]
    run = _attempt(engine, image, tmp_path / "claude", entry, case)
    assert run.outcome == "valid", _failed(run)
    faithful = _attempt(engine, image, tmp_path / "f", PROJECT.entries["scripted-faithful-docker"],
                        case)  # fmt: skip
    assert faithful.outcome == "valid" and run.output and faithful.output
    assert _differs(_tree(run.output), _tree(faithful.output)) == ""
    recording = run.gateway
    assert recording is not None and recording.outcome is None
    generate = [e for e in recording.exchanges if e.endpoint == "generate"]
    assert all(e.status == 200 for e in recording.exchanges)
    assert any(e.stream for e in generate)  # Claude Code streams its turns
    tools = [b["name"] for e in generate for b in (e.message or {}).get("content") or []
             if b.get("type") == "tool_use"]  # fmt: skip
    assert tools[0] == "Bash" and "Write" in tools
    last = generate[-1].message or {}
    assert [b.get("text") for b in last.get("content") or []] == [FINISHED]
    # its own report: the result JSON, beside the gateway's counts
    assert run.trace.turns is not None and run.trace.turns >= len(tools)
    assert run.trace.tokens is not None and run.trace.tokens > 0
    assert b'"type":"result"' in run.logs and b'"is_error":false' in run.logs
    # headless: it tried no host but its gateway
    assert run.egress["refused"] == 0, run.egress


@dataclass
class Flaky:
    """The scripted upstream, but ``statuses`` first (an HTTP status, or 0: no answer)."""

    inner: ScriptedUpstream
    statuses: list[int] = field(default_factory=list)
    kind: str = "scripted"
    credential: None = None
    after: int | None = None  # from this call on: no answer (the gateway cut off upstream)
    calls: int = 0

    async def send(self, out: Outgoing) -> Reply:
        self.calls += 1
        if self.after is not None and self.calls >= self.after:
            raise Dropped("cut")
        if self.statuses:
            status = self.statuses.pop(0)
            if status == 0:
                raise Dropped("no answer")
            error = {"type": "rate_limit_error", "message": "slow down"}
            return json_reply(status, {"type": "error", "error": error})
        return await self.inner.send(out)

    async def close(self) -> None:
        return None


@pytest.mark.docker
@pytest.mark.parametrize(
    ("statuses", "after", "outcome"),
    [([429], None, "valid"), ([], 3, "harness_failure")],
    ids=["429-then-200", "cut-mid-attempt"],
)
def test_a_429_is_retried_and_an_upstream_cut_is_the_harness_failure(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    tmp_path: Path,
    statuses: list[int],
    after: int | None,
    outcome: str,
) -> None:
    """429 then 200: valid. The upstream gone from the third call on (every try): a
    harness failure, which the next build retries."""
    flaky = Flaky(_scripted_upstream(), statuses=list(statuses), after=after)
    run = _attempt(engine, image, tmp_path, PROJECT.entries[SCRIPTED], config=_config(flaky))
    assert run.outcome == outcome, _failed(run)
    assert run.gateway is not None
    if outcome == "valid":
        assert [t.status for t in run.gateway.exchanges[0].tries] == [429, 200]
    else:
        assert "model API unavailable" in run.reason and "retried" in run.reason
        assert flaky.calls >= 3


@dataclass
class Silent:
    """An upstream that never answers."""

    kind: str = "scripted"
    credential: None = None

    async def send(self, out: Outgoing) -> Reply:
        await asyncio.sleep(3600)
        raise Dropped("never")

    async def close(self) -> None:
        return None


@pytest.mark.docker
def test_a_model_that_never_answers_is_a_timeout_at_wall_s(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    tmp_path: Path,
) -> None:
    entry = PROJECT.entries[SCRIPTED]
    entry = entry.model_copy(update={"budget": Budget(**{**entry.budget.model_dump(),
                                                         "wall_s": 20})})  # fmt: skip
    run = _attempt(engine, image, tmp_path, entry, config=_config(Silent()))
    assert run.outcome == "timeout", _failed(run)
    assert "20" in run.reason


@pytest.mark.docker
def test_telemetry_without_the_headless_switches_is_refused_and_counted(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    tmp_path: Path,
) -> None:
    entry = PROJECT.entries[SCRIPTED]
    kept = {k: v for k, v in entry.agent.set_env.items() if k not in HEADLESS}
    agent = entry.agent.model_copy(update={"set_env": kept})
    run = _attempt(engine, image, tmp_path, entry.model_copy(update={"agent": agent}))
    assert run.outcome == "valid", _failed(run)
    assert run.egress["refused"] >= 1, run.egress
    assert run.egress["allowed"] == 0
    refused = {e["target"] for e in run.egress["events"] if e["verdict"] == "refused"}
    assert refused and all(t.endswith(":443") for t in refused), refused


@pytest.mark.docker
def test_the_live_key_is_found_nowhere(
    engine: docker.DockerClient,  # noqa: F811
    image: ImageBuild,  # noqa: F811
    tmp_path: Path,
    test_ca: CertAuthority,  # noqa: F811
    server_tls: Any,  # noqa: F811
) -> None:
    """The live entry, its key in the host environment, Anthropic at a local TLS server that
    answers the tool script: the key reaches that server and no byte the attempt left."""
    vendor = Vendor(script=CaseScripts.from_answers(ANSWERS_DIR, KIND),
                    tools=ToolScripts.from_answers(ANSWERS_DIR, KIND))  # fmt: skip
    with vendor_api(vendor, server_tls):
        live = LiveSettings.from_env({"RECON_ANTHROPIC_BASE_URL": f"https://127.0.0.1:{vendor.port}",
                                      "RECON_LIVE_CA": str(test_ca.ca)})  # fmt: skip
        run = _attempt(engine, image, tmp_path, PROJECT.entries["claude-code"],
                       environ={"ANTHROPIC_API_KEY": CANARY.decode()}, live=live)  # fmt: skip
    assert run.outcome == "valid", _failed(run)
    assert vendor.headers and all(h["x-api-key"] == CANARY.decode() for h in vendor.headers)
    assert run.gateway is not None and run.output is not None
    left = [run.logs, run.trace_file, run.gateway.model_dump_json().encode()]
    left += [p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert len(left) > 3
    assert not [f for data in left for f in key_forms(CANARY) if f in data]
