"""The command-template adapter, trace parsers and the agent entries (no engine needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from recon.agents import CommandAdapter, lines, mini_swe_agent
from recon.model import Agent, Entry
from recon.pipeline.project import Project
from recon.sandbox import CONTAINER_PATHS

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
    project = Project.open(REPO)
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
