"""The pinned price table: generated from litellm's price map, loaded strictly."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from recon.errors import ConfigError
from recon.gateway.prices import (
    LITELLM_VERSION,
    MAP_FILE,
    PRICES,
    generate,
    load_prices,
    main,
    price_for,
    read_wheel,
    render,
)
from recon.model.gateway import ModelPrice, PriceSource

SOURCE = PriceSource(
    package="litellm", version="1.0.0", wheel="w.whl", wheel_sha256="0" * 64, file=MAP_FILE
)
MAP = {
    "sample_spec": {"litellm_provider": "one of ...", "input_cost_per_token": 0.0},
    "claude-sonnet-4-5": {
        "litellm_provider": "anthropic",
        "mode": "chat",
        "input_cost_per_token": 3e-06,
        "output_cost_per_token": 1.5e-05,
        "cache_read_input_token_cost": 3e-07,
        "cache_creation_input_token_cost": 3.75e-06,
        "max_tokens": 64000,
    },
    "gpt-5": {
        "litellm_provider": "openai",
        "mode": "responses",
        "input_cost_per_token": 1.25e-06,
        "output_cost_per_token": 1e-05,
        "cache_read_input_token_cost": 1.25e-07,
    },
    "gemini/gemini-2.5-pro": {
        "litellm_provider": "gemini",
        "mode": "chat",
        "input_cost_per_token": 1.25e-06,
        "output_cost_per_token": 1e-05,
    },
    "text-embedding-3-small": {
        "litellm_provider": "openai",
        "mode": "embedding",
        "input_cost_per_token": 2e-08,
        "output_cost_per_token": 0.0,
    },
    "bedrock/claude": {
        "litellm_provider": "bedrock",
        "mode": "chat",
        "input_cost_per_token": 1e-06,
        "output_cost_per_token": 1e-06,
    },
    "gpt-free": {
        "litellm_provider": "openai",
        "mode": "chat",
        "input_cost_per_token": "n/a",
        "output_cost_per_token": 1e-06,
    },
}


def test_generate_keeps_the_three_vendors_chat_models_per_token() -> None:
    table = generate(MAP, SOURCE)
    assert table.prices["anthropic"] == {
        "claude-sonnet-4-5": ModelPrice(
            input=3e-06, output=1.5e-05, cache_read=3e-07, cache_write=3.75e-06
        )
    }
    assert table.prices["openai"] == {
        "gpt-5": ModelPrice(input=1.25e-06, output=1e-05, cache_read=1.25e-07, cache_write=1.25e-06)
    }
    assert list(table.prices["gemini"]) == ["gemini-2.5-pro"]
    assert table.prices["gemini"]["gemini-2.5-pro"].cache_read == 1.25e-06


def test_the_committed_table_names_its_source_and_is_canonical() -> None:
    table = load_prices(PRICES)
    assert (table.source.package, table.source.version) == ("litellm", LITELLM_VERSION)
    assert table.source.file == MAP_FILE and table.generated_by.startswith("python -m")
    assert render(table) == PRICES.read_bytes()
    sonnet = price_for(table, "anthropic", "claude-sonnet-4-5-20250929")
    assert sonnet is not None and sonnet.input == 3e-06
    assert price_for(table, "gemini", "models/gemini-2.5-pro") is not None
    assert price_for(table, "openai", "no-such-model") is None


def _wheel(tmp_path: Path) -> Path:
    wheel = tmp_path / "litellm-9.9.9-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(MAP_FILE, json.dumps(MAP))
    return wheel


def test_read_wheel_reads_the_map_and_hashes_the_wheel(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path)
    price_map, source = read_wheel(wheel)
    assert price_map == MAP
    assert (source.version, source.wheel, len(source.wheel_sha256)) == ("9.9.9", wheel.name, 64)


def test_generate_writes_a_table_that_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "prices.json"
    assert main(["generate", "--wheel", str(_wheel(tmp_path)), "--out", str(out)]) == 0
    table = load_prices(out)
    assert table.source.version == "9.9.9" and "claude-sonnet-4-5" in table.prices["anthropic"]
    assert out.read_bytes() == render(table) and capsys.readouterr().out.strip() == str(out)


def test_a_malformed_table_is_one_line_naming_the_file_and_field(tmp_path: Path) -> None:
    data = json.loads(PRICES.read_text())
    data["prices"]["anthropic"]["claude-sonnet-4-5"]["output"] = "cheap"
    bad = tmp_path / "prices.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as err:
        load_prices(bad)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(f"{bad}: prices.anthropic.claude-sonnet-4-5.output: must be a number")
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match=str(bad)):
        load_prices(bad)
