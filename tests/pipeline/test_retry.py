"""Harness failures are retried up to ``protocol.retry.harness_failure`` times, each try its
own record linked to the one it replaces; then the failure is final (issue 10)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from recon.store import Store
from tests.conftest import copy_project, doit

pytestmark = [pytest.mark.slow, pytest.mark.browser]

NAME = "retry-native.scripted-locked.html5-boilerplate.0"


def attempt(project: Path) -> tuple[dict, dict]:  # type: ignore[type-arg]
    pointer = json.loads((project / f"store/cells/attempt/{NAME}.json").read_text())
    record = Store(project / "store").read_json(pointer["outputs"]["record"]["digest"])
    return pointer, record


def test_retries_are_bounded_and_linked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = copy_project(tmp_path / "p")
    entry = yaml.safe_load((project / "entries/scripted-starter.yaml").read_text())
    entry["id"] = "scripted-locked"
    entry["agent"]["env"] = ["RECON_TEST_LOCKED_KEY"]
    entry["agent"]["credentials"] = ["RECON_TEST_LOCKED_KEY"]
    (project / "entries/scripted-locked.yaml").write_text(yaml.safe_dump(entry))
    release = yaml.safe_load((project / "releases/demo.yaml").read_text())
    release.update(id="retry", cases=["html5-boilerplate"], entries=["scripted-locked"])
    release["protocol"].update(name="retry-native", repeats=1, retry={"harness_failure": 1})
    (project / "releases/demo.yaml").unlink()
    (project / "releases/retry.yaml").write_text(yaml.safe_dump(release))
    monkeypatch.delenv("RECON_TEST_LOCKED_KEY", raising=False)

    first = doit(project, "release:retry")
    assert f"attempt:{NAME}" in first.ran
    pointer, record = attempt(project)
    assert pointer["retry"] is True and record["outcome"] == "harness_failure"
    assert record["try_index"] == 0 and record["retry_of"] is None
    first_record = pointer["outputs"]["record"]["digest"]

    second = doit(project, "release:retry")
    assert f"attempt:{NAME}" in second.ran
    pointer, record = attempt(project)
    assert pointer["retry"] is False, "one retry allowed: the second failure is final"
    assert record["try_index"] == 1 and record["retry_of"] == first_record
    assert "final: 1 retries" in record["reason"]
    assert "credentials missing: RECON_TEST_LOCKED_KEY" in record["reason"]

    third = doit(project, "release:retry")
    assert third.ran == [] and sum(third.executed.values()) == 0, third.stdout
    result = json.loads((project / "releases/retry/release.json").read_text())
    overall = result["reliability"]["overall"]
    assert overall["by_outcome"] == {"harness_failure": 1}
    assert (overall["tries"], overall["retries"], overall["harness_failures"]) == (2, 1, 2)
    assert result["attempts"][0]["tries"] == 2
    assert result["entries"][0]["ranked"] is False
