"""The hostile-outputs release (issue 27): one entry per output trick beside two honest
entries, on one case, native and docker. The build exits 0, every hostile attempt has a
record with its reason, and the honest entries' rows are byte-identical to those of a build
without the hostile ones (built first, in the same store, whose cells the second reuses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from recon.model import AttemptRecord
from recon.store import Store, canonical_json
from tests.conftest import copy_project, doit
from tests.sandbox.tricks import DEPTH, FILES, TRICKS, Trick, agent, names_first

pytestmark = [pytest.mark.slow, pytest.mark.browser]

CASE = "html5-boilerplate"  # one route: the cheapest case to render
# The per-file cap of the backends is their disk budget (native) or 64 MB (docker): the
# too-big trick is the unit and backend tests' (tests/sandbox), run with a 1 MB cap.
RELEASE_TRICKS = [t for t in TRICKS if t.native]
BACKENDS = {
    "native": {"honest": ["scripted-faithful", "scripted-starter"], "template": "scripted-starter"},
    "docker": {
        "honest": ["scripted-faithful-docker", "scripted-starter-docker"],
        "template": "scripted-starter-docker",
    },
}


def hostile_entry(project: Path, template: str, trick: Trick, backend: str) -> str:
    """``entries/hostile-<backend>-<trick>.yaml``: an agent that leaves ``trick`` in site/."""
    entry_id = f"hostile-{backend}-{trick.name}"
    script = Path("scripted") / "hostile" / f"leave-{trick.name}.py"  # no module name
    (project / "entries" / script).parent.mkdir(exist_ok=True)
    (project / "entries" / script).write_text(agent(trick, "site"))
    entry = yaml.safe_load((project / "entries" / f"{template}.yaml").read_text())
    entry.update(id=entry_id, model=dict(entry["model"], name=entry_id))
    entry["agent"] = dict(
        entry["agent"], command=["{python}", f"{{entry_dir}}/{script}", "{workspace}"],
        files=[str(script)],
    )  # fmt: skip
    entry["budget"] = dict(entry["budget"], output_files=FILES, output_depth=DEPTH)
    (project / "entries" / f"{entry_id}.yaml").write_text(yaml.safe_dump(entry))
    return entry_id


def release(project: Path, release_id: str, backend: str, entries: list[str]) -> str:
    """A release of ``CASE`` and ``entries``, one attempt each, under one protocol shared by
    every release of ``backend`` (so a second release reuses the first one's cells)."""
    protocol = {
        "name": f"hostile-{backend}",
        "repeats": 1,
        "time_limit_s": 120,
        "backend": backend,
        "formal": backend == "docker",
        "retry": {"harness_failure": 2},
    }
    definition = {
        "schema_version": 1,
        "id": release_id,
        "title": f"hostile outputs ({backend})",
        "cases": [CASE],
        "entries": entries,
        "protocol": protocol,
        "aggregation": {"rule": "case-mean-v1"},
    }
    (project / "releases" / f"{release_id}.yaml").write_text(yaml.safe_dump(definition))
    return release_id


def rows(project: Path, release_id: str) -> dict[str, Any]:
    data = json.loads((project / "releases" / release_id / "release.json").read_text())
    return {row["entry"]: row for row in data["entries"]}


def record(project: Path, backend: str, entry: str) -> AttemptRecord:
    cell = f"hostile-{backend}.{entry}.{CASE}.0.json"
    pointer = json.loads((project / "store" / "cells" / "attempt" / cell).read_text())
    store = Store(project / "store")
    return AttemptRecord.model_validate(store.read_json(pointer["outputs"]["record"]["digest"]))


@pytest.mark.parametrize("backend", ["native", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_hostile_outputs_release_builds_and_leaves_honest_rows_alone(
    tmp_path: Path, backend: str
) -> None:
    project = copy_project(tmp_path / "p")
    honest = BACKENDS[backend]["honest"]
    template = BACKENDS[backend]["template"]
    hostile = {hostile_entry(project, template, t, backend): t for t in RELEASE_TRICKS}
    both = ("-n", "2", "-P", "thread")  # two cells at once, as releases are built
    doit(project, *both, f"release:{release(project, 'honest', backend, honest)}")
    hostile_release = release(project, "hostile", backend, honest + list(hostile))
    build = doit(project, *both, f"release:{hostile_release}")

    again = [c for c in build.ran if any(f".{e}." in c for e in honest)]
    assert again == [], "the honest entries' cells ran again"  # all reused from the first
    before, after = rows(project, "honest"), rows(project, "hostile")
    for entry in honest:
        assert canonical_json(after[entry]) == canonical_json(before[entry]), entry
    for entry, trick in hostile.items():
        found = record(project, backend, entry)
        if trick.refusals:
            expected = trick.expected("site")
            assert (found.outcome, found.refusals) == ("ungradeable", expected), found.reason
            assert names_first(found.reason, expected[0]), found.reason
            assert after[entry]["ranked"] is False and after[entry]["score"] is None
        else:
            valid = ("valid", "submitted a build", [])
            assert (found.outcome, found.reason, found.refusals) == valid
            # its page (one heading) ranks below both honest entries, so their ranks stand
            assert after[entry]["score"] is not None
        outcomes = [c["attempts"] for c in after[entry]["cases"]]
        assert outcomes == [{found.outcome: 1}], entry
