"""releases/2025q1.yaml, loaded and planned, cheaply (no engine, no browser, no build).

The formal release covers the whole suite on the docker backend; its cells per kind follow
from its cases, entries and contracts; Claude Code, Codex CLI, Gemini CLI and aider,
without their keys, are harness failures decided by the attempt kind before anything starts;
and the aggregation policy, fed the plan's attempts, ranks exactly the entries that can cover
every case.
The full build is a command (`doit release:2025q1`, see the README), not part of CI.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pytest

from recon.agents import CommandAdapter, not_started
from recon.model import AttemptRecord
from recon.model.matrix import points
from recon.pipeline import Pipeline
from recon.pipeline.kinds.attempt import _run
from recon.pipeline.runtime import walk
from recon.project.loader import Project
from recon.project.settings import Settings
from recon.release.aggregate import Conditions, Graded, aggregate
from recon.store import digest_json

REPO = Path(__file__).resolve().parents[2]
RELEASE = "2025q1"
SCRIPTED = ["scripted-faithful-docker", "scripted-flawed-docker", "scripted-starter-docker"]
RANKED = {*SCRIPTED, "mini-swe-agent-scripted", "claude-code-scripted", "codex-scripted"}
RANKED |= {"gemini-cli-scripted", "aider-scripted"}
NEEDS_KEYS = {"claude-code": "ANTHROPIC_API_KEY", "codex-cli": "OPENAI_API_KEY"}
NEEDS_KEYS |= {"gemini-cli": "GEMINI_API_KEY", "aider": "OPENAI_API_KEY"}


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RECON_STORE", str(tmp_path_factory.mktemp("store")))
        return Pipeline(Project.open(REPO, Settings.from_env()))


def test_it_is_formal_on_docker_and_covers_the_whole_suite(pipeline: Pipeline) -> None:
    project = pipeline.project
    release = project.release(RELEASE)
    every_case = sorted(p.parent.name for p in (REPO / "cases").glob("*/case.yaml"))
    assert len(every_case) >= 10 and sorted(release.cases) == every_case
    assert sorted(release.cases) == sorted(project.release("suite").cases)
    assert release.protocol.formal and release.protocol.backend == "docker"
    assert set(release.entries) == RANKED | set(NEEDS_KEYS)
    assert {project.entries[e].sandbox.backend for e in release.entries} == {"docker"}
    # the docker variants are the suite's scripted entries with only the sandbox changed
    for docker_id in SCRIPTED:
        native = project.entries[docker_id.removesuffix("-docker")].model_dump(mode="json")
        variant = project.entries[docker_id].model_dump(mode="json")
        assert native.pop("sandbox") == {"backend": "native", "egress": []}
        assert variant.pop("sandbox") == {"backend": "docker", "egress": []}
        assert {**variant, "id": native["id"]} == native


def test_its_cells_per_kind(pipeline: Pipeline) -> None:
    release = pipeline.project.release(RELEASE)
    cells = list(walk([pipeline.roots[RELEASE]]))
    kinds = Counter(cell.kind for cell in cells)
    cases = [pipeline.project.cases[c] for c in release.cases]
    attempts = len(release.cases) * len(release.entries) * release.protocol.repeats
    assert attempts == 120
    matrix = sum(len(points(case.contract)) for case in cases)
    assert kinds == {
        "image": 1,  # docker only: no native entry
        "evidence": len(cases),
        "workspace": len(cases),
        "attempt": attempts,
        "oracle": matrix,
        "capture": attempts + len(cases),  # every attempt, and each case's starter
        "probe": attempts + 2 * len(cases),  # every attempt, each reference and starter
        "grade": attempts,
        "aggregate": 1,
        "site": 1,
        "manifest": 1,
    }
    [image] = [cell for cell in cells if cell.kind == "image"]
    assert image.name == "docker" and image.params["recipe"]["kind"] == "docker-debootstrap"


def test_missing_keys_are_harness_failures_before_anything_starts(
    pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attempt kind's own run path, for every case: no container, no server."""
    for name in NEEDS_KEYS.values():
        monkeypatch.delenv(name, raising=False)
    attempts = [c for c in walk([pipeline.roots[RELEASE]]) if c.kind == "attempt"]
    for cell in attempts:
        entry = pipeline.project.entries[cell.params["entry"]]
        if entry.id not in NEEDS_KEYS:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            run = _run(pipeline.rt, cell, entry, Path(tmp), Path(tmp) / "out")
        assert run.outcome == "harness_failure" and run.output is None
        assert run.reason.startswith(f"harness: credentials missing: {NEEDS_KEYS[entry.id]}")
        assert run.duration_s == 0.0 and run.logs == b""
    assert sum(c.params["entry"] in NEEDS_KEYS for c in attempts) == 40


def test_the_policy_ranks_the_entries_that_can_cover_every_case(pipeline: Pipeline) -> None:
    """Every planned attempt as the build would record it: each entry that needs a key
    a harness failure, the others valid (the faithful answer above the flawed one above
    the starter); the scripted model's key is issued by the build, so it needs none."""
    project, graph = pipeline.project, pipeline.graph
    release = project.release(RELEASE)
    protocol_digest = project.protocol_digest(release.protocol)
    image = digest_json({"image": "docker"})
    totals = {"scripted-faithful-docker": 0.9, "mini-swe-agent-scripted": 0.9}
    totals |= {"claude-code-scripted": 0.9, "codex-scripted": 0.9}
    totals |= {"gemini-cli-scripted": 0.9, "aider-scripted": 0.9}
    totals |= {"scripted-flawed-docker": 0.7, "scripted-starter-docker": 0.3}
    graded = []
    for cell in walk([pipeline.roots[RELEASE]]):
        if cell.kind != "attempt":
            continue
        entry = project.entries[cell.params["entry"]]
        issued = entry.agent.credentials if entry.model.provider == "scripted" else []
        environ = dict.fromkeys(issued, "key")
        reason = CommandAdapter(entry.agent).credentials_reason(entry.id, environ)
        run = not_started(reason) if reason is not None else None
        record = AttemptRecord(
            entry=entry.id, case=cell.params["case"], index=cell.params["index"],
            protocol=release.protocol.name, backend="docker", formal=True,
            outcome="valid" if run is None else run.outcome,
            reason="valid" if run is None else run.reason, image=image,
            protocol_digest=protocol_digest, entry_digest=graph.entry_digest(entry.id),
            evidence_condition=entry.evidence_condition,
        )  # fmt: skip
        total = totals.get(entry.id) if run is None else None
        table = None if total is None else {"total": total, "dimensions": {}, "terms": {}}
        graded.append(Graded(cell.name, record, digest_json(cell.name), table))
    conditions = Conditions(
        protocol_digest=protocol_digest,
        images={"docker": image},
        entries={e: graph.entry_digest(e) for e in release.entries},
        skills={e: graph.skill_digest(e) for e in release.entries},
    )
    result = aggregate(release, project.entries, graded, conditions).result
    ranked = {e.entry for e in result.entries if e.rank is not None}
    assert ranked == RANKED
    for entry in result.entries:
        if entry.entry in NEEDS_KEYS:
            assert entry.rank is None and entry.score is None and entry.covered == 0
    assert result.reliability.overall.by_outcome["harness_failure"] == 40
    assert result.reliability.overall.by_outcome["valid"] == 80
