"""JSON Schemas: every file format has one, and `recon schema` writes them all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from recon.model import SCHEMAS, Versioned

REPO = Path(__file__).resolve().parents[2]


def test_schemas_cover_the_file_formats() -> None:
    expected = {"case", "contract", "provenance", "grading", "entry", "release-definition"}
    assert expected <= set(SCHEMAS)
    assert all(issubclass(model, Versioned) for model in SCHEMAS.values())
    assert len(set(SCHEMAS.values())) == len(SCHEMAS), "one name per model"


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_each_schema_is_generated_with_schema_version(name: str) -> None:
    schema = SCHEMAS[name].model_json_schema()
    assert schema["type"] == "object"
    assert "schema_version" in schema["properties"]
    assert schema["properties"]["schema_version"]["type"] == "integer"
    assert schema.get("additionalProperties") is False  # unknown keys are refused
    json.dumps(schema)  # serialisable as written by `recon schema`


def test_recon_schema_writes_one_file_per_schema(tmp_path: Path) -> None:
    out = tmp_path / "schemas"
    proc = subprocess.run(
        [sys.executable, "-m", "recon", "schema", "--out", str(out)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},  # this checkout's recon, not an installed one
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(f"{name}.schema.json" for name in SCHEMAS)
    for name, model in SCHEMAS.items():
        on_disk = json.loads((out / f"{name}.schema.json").read_text())
        assert on_disk == model.model_json_schema()
    assert sorted(proc.stdout.split()) == sorted(str(out / n) for n in written)
