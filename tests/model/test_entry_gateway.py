"""An entry's model budget (``budget.tokens``, ``budget.cost_usd``) and its way to the model
gateway (``agent.gateway``): new keys that leave every existing entry's digest as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from recon.errors import ConfigError
from recon.model import Entry, load_yaml
from recon.store import digest_json

REPO = Path(__file__).resolve().parents[2]
DOCKER_ENTRY = REPO / "entries" / "mini-swe-agent-scripted.yaml"

DIGESTS = {
    "mini-swe-agent-scripted": "5420ec93f88ed89c9f9c84afe0a85a78250038fcc75ddc0bc3a583c265918210",
    "scripted-crash": "e04849fb1130c866667434f9ec4078165d4c51220afd1b5bad48dfa638aa6ab0",
    "scripted-faithful-docker": "a306b4e7727777edc1b488f40e2981d6c69c54e3f65718a4bb5064e04d76db7a",
    "scripted-faithful": "3b660b33d8bec1bd0a250a9f8bc10fdff173faa416b109fabef52a4654fcd7b0",
    "scripted-flawed-docker": "27d468d0d271ae0ee58663e55881d34446623ed1d0ee5157c7e2bf1df769401f",
    "scripted-flawed": "0b6ddc82b8ca558ab563ce931294cf65fcaabeea9a244d931494b37c89fcdae9",
    "scripted-starter-docker": "9e3e87c5a56cc3cf9d2021956764cece494900e1cf522868d023dd79234132f8",
    "scripted-starter": "56576efa201edeb7d872ca232aa3c9a7eb94538ab30febc64e4f0511e820865d",
}
"""Each entry's dump digest, taken before the gateway keys existed (main at e184df8).
claude-code and codex-cli are not in it: they moved onto the gateway (a new pin, so their
attempts run again)."""
ON_THE_GATEWAY = {"claude-code": "ANTHROPIC_API_KEY", "codex-cli": "OPENAI_API_KEY"}


@pytest.mark.parametrize("name", sorted(DIGESTS))
def test_every_existing_entry_keeps_its_digest(name: str) -> None:
    entry = load_yaml(Entry, REPO / "entries" / f"{name}.yaml")
    dumped = entry.model_dump(mode="json")
    assert "gateway" not in dumped["agent"]
    assert not {"tokens", "cost_usd"} & set(dumped["budget"])
    assert digest_json(dumped) == DIGESTS[name]


@pytest.mark.parametrize("name", sorted(ON_THE_GATEWAY))
def test_the_real_agents_reach_their_model_through_the_gateway_only(name: str) -> None:
    entry = load_yaml(Entry, REPO / "entries" / f"{name}.yaml")
    assert entry.agent.gateway and entry.model.provider in ("anthropic", "openai")
    assert entry.agent.credentials == [ON_THE_GATEWAY[name]]
    assert entry.agent.env == [] and entry.sandbox.egress == []  # no key forwarded, no host


def _gateway_entry(**changes: Any) -> dict[str, Any]:
    data = yaml.safe_load(DOCKER_ENTRY.read_text())
    data["agent"]["gateway"] = {"OPENAI_BASE_URL": "/v1", "ANTHROPIC_BASE_URL": ""}
    data["budget"]["tokens"] = 5000
    data["budget"]["cost_usd"] = 0.25
    data["sandbox"]["egress"] = []
    for path, value in changes.items():
        *parents, last = path.split("__")
        node = data
        for part in parents:
            node = node[part]
        node[last] = value
    return data


def _load(tmp_path: Path, data: dict[str, Any]) -> Entry:
    path = tmp_path / "gw.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_yaml(Entry, path)


def _refused(tmp_path: Path, data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, data)
    message = str(err.value)
    assert err.value.exit_code == 2 and "\n" not in message
    return message


def test_a_gateway_entry_keeps_its_keys_in_its_dump_and_digest(tmp_path: Path) -> None:
    entry = _load(tmp_path, _gateway_entry())
    dumped = entry.model_dump(mode="json")
    assert dumped["agent"]["gateway"] == {"OPENAI_BASE_URL": "/v1", "ANTHROPIC_BASE_URL": ""}
    assert (dumped["budget"]["tokens"], dumped["budget"]["cost_usd"]) == (5000, 0.25)
    assert digest_json(dumped) != DIGESTS["mini-swe-agent-scripted"]
    again = _gateway_entry(budget__tokens=5001)
    assert digest_json(_load(tmp_path, again).model_dump(mode="json")) != digest_json(dumped)


@pytest.mark.parametrize(
    ("field", "value"),
    [("tokens", "lots"), ("tokens", "5000"), ("tokens", 2.5), ("tokens", True),
     ("cost_usd", "5"), ("cost_usd", "5 USD"), ("cost_usd", True)],
)  # fmt: skip
def test_a_budget_that_is_not_a_number_is_one_line(
    tmp_path: Path, field: str, value: object
) -> None:
    message = _refused(tmp_path, _gateway_entry(**{f"budget__{field}": value}))
    assert f"budget.{field}" in message


def test_a_model_budget_needs_the_gateway(tmp_path: Path) -> None:
    data = _gateway_entry()
    del data["agent"]["gateway"]
    assert "budget.tokens is enforced by the model gateway" in _refused(tmp_path, data)


def test_the_gateway_is_docker_only(tmp_path: Path) -> None:
    data = _gateway_entry(sandbox__backend="native", sandbox__egress=[])
    data["agent"]["command"] = ["true"]
    assert "docker backend only" in _refused(tmp_path, data)


def test_a_gateway_entry_does_not_proxy_the_loopback(tmp_path: Path) -> None:
    assert _load(tmp_path, _gateway_entry()).sandbox.egress == []
    loopback = _gateway_entry(sandbox__egress=["127.0.0.1:18080"])  # the old scripted server
    assert "remove the host's loopback" in _refused(tmp_path, loopback)


def test_a_gateway_variable_is_not_also_forwarded_or_fixed(tmp_path: Path) -> None:
    data = _gateway_entry()
    data["agent"]["set_env"]["OPENAI_BASE_URL"] = "http://x"
    assert "set to the gateway's address" in _refused(tmp_path, data)


@pytest.mark.parametrize("path", ["v1", "/v1/", "/v1?x", "http://h/v1"])
def test_a_base_path_is_a_plain_path(tmp_path: Path, path: str) -> None:
    message = _refused(tmp_path, _gateway_entry(agent__gateway={"OPENAI_BASE_URL": path}))
    assert "agent.gateway.OPENAI_BASE_URL" in message


def test_a_gateway_variable_is_a_safe_name(tmp_path: Path) -> None:
    message = _refused(tmp_path, _gateway_entry(agent__gateway={"LD_PRELOAD": ""}))
    assert "LD_PRELOAD changes what programs load" in message
