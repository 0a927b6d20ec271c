"""The gateway an entry's attempt gets (``recon.agents.gateway``): its upstream from the
provider, its key from the host environment (never the sandbox's), its budget and the
variables its address and token go into. No socket: the plan is only built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from recon.agents import CommandAdapter
from recon.agents.gateway import gateway_plan, uses_gateway
from recon.errors import HarnessError
from recon.gateway import (
    LiveSettings,
    LiveUpstream,
    ReplayUpstream,
    ScriptedUpstream,
    prices_digest,
)
from recon.model import AttemptRecord, Entry, ModelUse, Trace
from recon.model.gateway import Recording, Usage
from recon.sandbox import CONTAINER_PATHS
from recon.sandbox.gateway import agent_env

REPO = Path(__file__).resolve().parents[2]
ENTRIES = REPO / "entries"
TEST_ENTRY = REPO / "tests" / "pipeline" / "gateway" / "gateway-scripted.yaml"
KEY = "sk-ant-host-only-5e6f"


def _entry(**changes: Any) -> Entry:
    data = yaml.safe_load(TEST_ENTRY.read_text())
    for section, values in changes.items():
        data[section] = {**data[section], **values}
    return Entry.model_validate(data)


def test_a_scripted_entry_gets_the_scripted_upstream_and_its_budget() -> None:
    entry = _entry(budget={"tokens": 1234, "cost_usd": 0.5})
    plan = gateway_plan(entry, ENTRIES, {})
    env = agent_env(plan)
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:3129/v1"
    assert {env[v] for v in entry.agent.credentials} == {plan.token}
    assert len(plan.token) >= 32


def test_the_gateway_config_holds_the_upstream_prices_and_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, Any] = {}

    def serve(config: Any, socket: Path) -> Any:
        seen.update(config=config, socket=socket)
        return None

    monkeypatch.setattr("recon.gateway.serve_gateway", serve)
    entry = _entry(budget={"tokens": 1234, "cost_usd": 0.5})
    gateway_plan(entry, ENTRIES, {}).serve(Path("/x/gateway.sock"))
    config = seen["config"]
    assert isinstance(config.upstream, ScriptedUpstream) and seen["socket"] == Path(
        "/x/gateway.sock"
    )
    assert (config.limits.tokens, config.limits.cost_usd) == (1234, 0.5)
    assert config.prices_digest == prices_digest()


def test_a_vendor_gets_the_live_upstream_with_the_host_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setattr("recon.gateway.serve_gateway", lambda config, socket: seen.update(c=config))
    entry = _entry(
        model={"provider": "anthropic", "name": "claude-haiku-4-5"},
        agent={"env": ["ANTHROPIC_API_KEY"], "credentials": ["ANTHROPIC_API_KEY"]},
    )
    plan = gateway_plan(entry, ENTRIES, {"ANTHROPIC_API_KEY": KEY})
    plan.serve(Path("/x"))
    upstream = seen["c"].upstream
    assert isinstance(upstream, LiveUpstream)
    assert upstream.credential.variable == "ANTHROPIC_API_KEY"
    assert upstream.credential.value == KEY
    assert plan.token_vars == ["ANTHROPIC_API_KEY"] and KEY not in repr(plan)
    assert KEY not in agent_env(plan).values()


def test_a_vendor_without_credentials_uses_its_usual_variable() -> None:
    entry = _entry(model={"provider": "openai", "name": "gpt-4.1-mini"},
                   agent={"env": [], "credentials": []})  # fmt: skip
    plan = gateway_plan(entry, ENTRIES, {"OPENAI_API_KEY": KEY})
    assert plan.token_vars == ["OPENAI_API_KEY"]


def test_a_missing_host_key_is_a_harness_failure_naming_it() -> None:
    entry = _entry(
        model={"provider": "gemini", "name": "gemini-2.5-flash"},
        agent={"env": ["GEMINI_API_KEY"], "credentials": ["GEMINI_API_KEY"]},
    )
    with pytest.raises(HarnessError, match="credentials missing: GEMINI_API_KEY is not set"):
        gateway_plan(entry, ENTRIES, {})


def test_a_replayed_vendor_entry_needs_no_key_and_keeps_its_token_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setattr("recon.gateway.serve_gateway", lambda config, socket: seen.update(c=config))
    recording = Recording(upstream="live", prices_digest=prices_digest(), exchanges=[],
                          usage=Usage(), cost_usd=0.0)  # fmt: skip
    entry = _entry(model={"provider": "openai", "name": "gpt-4.1-mini"},
                   agent={"env": [], "credentials": []})  # fmt: skip
    plan = gateway_plan(entry, ENTRIES, {}, replay=recording)  # no key in the environment
    plan.serve(Path("/x"))
    upstream = seen["c"].upstream
    assert isinstance(upstream, ReplayUpstream) and upstream.credential is None
    assert plan.token_vars == ["OPENAI_API_KEY"]  # where the recorded run had its token


def test_an_unknown_provider_never_reaches_the_plan() -> None:
    """Refused when the entry loads (tests/model/test_entry_gateway_rules.py), not at run time."""
    with pytest.raises(ValidationError, match="unknown provider 'acme' for the gateway"):
        _entry(model={"provider": "acme"})


def test_a_live_vendor_goes_where_the_harness_settings_say(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: dict[str, Any] = {}
    monkeypatch.setattr("recon.gateway.serve_gateway", lambda config, socket: seen.update(c=config))
    entry = _entry(model={"provider": "anthropic", "name": "claude-haiku-4-5"},
                   agent={"env": [], "credentials": ["ANTHROPIC_API_KEY"]})  # fmt: skip
    live = LiveSettings({"anthropic": "https://127.0.0.1:8443/x"})
    gateway_plan(entry, ENTRIES, {"ANTHROPIC_API_KEY": KEY}, live=live).serve(tmp_path)
    assert str(seen["c"].upstream.url) == "https://127.0.0.1:8443/x"
    gateway_plan(entry, ENTRIES, {"ANTHROPIC_API_KEY": KEY}).serve(tmp_path)
    assert str(seen["c"].upstream.url) == "https://api.anthropic.com"


def test_a_gateway_entry_never_forwards_its_credentials() -> None:
    entry = _entry(
        agent={"env": ["ANTHROPIC_API_KEY", "HOME_LANG"], "credentials": ["ANTHROPIC_API_KEY"]}
    )
    host = {"ANTHROPIC_API_KEY": KEY, "HOME_LANG": "en"}
    prepared = CommandAdapter(entry.agent).prepare(CONTAINER_PATHS, host)
    assert prepared.env == {"HOME_LANG": "en"}
    assert KEY in prepared.secrets  # still scrubbed from every log
    assert uses_gateway(entry)
    plain = Entry.model_validate(
        yaml.safe_load((ENTRIES / "mini-swe-agent-scripted.yaml").read_text())
    )
    assert not uses_gateway(plain)
    forwarded = CommandAdapter(plain.agent).prepare(CONTAINER_PATHS, {"SCRIPTED_MODEL_KEY": KEY})
    assert forwarded.env["SCRIPTED_MODEL_KEY"] == KEY  # without the gateway: as before


def _record(**extra: Any) -> AttemptRecord:
    return AttemptRecord(entry="e", case="c", index=0, protocol="p", backend="docker",
                         formal=True, outcome="valid", reason="r", image="a" * 64,
                         trace=Trace(), **extra)  # fmt: skip


def test_a_record_without_the_gateway_dumps_as_before() -> None:
    assert "model_use" not in _record().model_dump(mode="json")
    use = ModelUse(calls=2, usage=Usage(input=5, output=3), tokens=8, cost_usd=0.01)
    dumped = _record(model_use=use).model_dump(mode="json")
    assert dumped["model_use"]["tokens"] == 8
    assert AttemptRecord.model_validate(dumped).model_use == use
