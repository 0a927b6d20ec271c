"""A repeated id is one short error naming the ids and the file, never the parsed file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from recon.errors import ConfigError
from recon.model import Grading, load_yaml

REPO = Path(__file__).resolve().parents[2]
LIMIT = 300


def _grading() -> dict[str, Any]:
    text = (REPO / "cases" / "bootstrap-widgets" / "sealed" / "grading.yaml").read_text()
    data: dict[str, Any] = yaml.safe_load(text)
    return data


def _repeat_region(g: dict[str, Any]) -> str:
    g["regions"].append(dict(g["regions"][0]))
    return str(g["regions"][0]["id"])


def _repeat_checkpoint(g: dict[str, Any]) -> str:
    steps = g["workflows"][0]["steps"]
    checkpoint = next(s for s in steps if "assertions" in s)
    steps.append(dict(checkpoint))
    return str(checkpoint["id"])


def _repeat_in_preservation(g: dict[str, Any]) -> str:
    g["preservation"]["assertions"].append(dict(g["assertions"][0]))
    return str(g["assertions"][0]["id"])


@pytest.mark.parametrize("repeat", [_repeat_region, _repeat_checkpoint, _repeat_in_preservation])
def test_a_repeated_id_names_the_ids_and_the_file_only(repeat: Any, tmp_path: Path) -> None:
    data = _grading()
    ident = repeat(data)
    path = tmp_path / "grading.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_yaml(Grading, path)
    message = str(err.value)
    assert message.startswith(f"{path}: ")
    assert repr(ident) in message
    assert len(message) < LIMIT and "\n" not in message, message
