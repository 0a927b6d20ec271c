"""An attempt cell whose agent reaches its model through the gateway (issue 24): the price
table's digest in its key (and in no other attempt's), the recording as run metadata, the
metered use in the record, a spent budget as the record's outcome, no key in any store
object, and the same on a Ray worker as in process. The entry is test-only
(``tests/pipeline/gateway/``): entries/ stays as it is."""

from __future__ import annotations

import json
import shutil
import ssl
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from recon.agents.model_server import CaseScripts
from recon.agents.scripted import ANSWERS, KIND
from recon.gateway.conversation import chat_view
from recon.gateway.prices import prices_digest
from recon.gateway.upstream import scripted_usage
from recon.model import AttemptRecord, Pointer
from recon.model.gateway import Recording, Usage
from recon.model.kinds import RUN_METADATA
from recon.pipeline.cells import run_cell
from recon.pipeline.executor import ExecutorChoice
from recon.pipeline.runtime import Cell, walk
from recon.pipeline.tasks import Pipeline
from recon.project.loader import Project
from recon.project.settings import Settings
from recon.store import checkout_tree
from tests.conftest import copy_project, doit, doit_env
from tests.gateway.conftest import (  # noqa: F401 (test_ca and server_tls: fixtures)
    CertAuthority,
    Vendor,
    key_forms,
    server_tls,
    test_ca,
    vendor_api,
)
from tests.pipeline.raycluster import ray_cluster

HERE = Path(__file__).parent
AGENT = HERE.parent / "sandbox" / "gateway_agent.py"
CASE = "clean-blog"  # seven files: nine turns, each protocol at least once
KEYS = {"ANTHROPIC_API_KEY": "sk-ant-canary-4d1f", "OPENAI_API_KEY": "sk-oai-canary-9b2e",
        "GEMINI_API_KEY": "gm-canary-77c3a0"}  # fmt: skip
OLD_PARAMS = {"entry", "case", "index", "entry_digest", "protocol"}


def _project(
    tmp_path: Path,
    case: str = CASE,
    change: Callable[[Any], None] | None = None,
    repeats: int = 1,
    **budget: object,
) -> Path:
    """A project copy with the test entry (``change``d) and ``releases/gw.yaml``: it alone,
    on ``case``, ``repeats`` attempts."""
    project = copy_project(tmp_path / "p")
    entry = yaml.safe_load((HERE / "gateway" / "gateway-scripted.yaml").read_text())
    entry["budget"].update(budget)
    if change is not None:
        change(entry)
    (project / "entries" / "gateway-scripted.yaml").write_text(yaml.safe_dump(entry))
    (project / "entries" / "gateway").mkdir()
    shutil.copy2(AGENT, project / "entries" / "gateway" / "agent.py")
    release = {
        "schema_version": 1, "id": "gw", "title": "gateway", "cases": [case],
        "entries": ["gateway-scripted"], "aggregation": {"rule": "case-mean-v1"},
        "protocol": {"name": "gw-docker", "repeats": repeats, "time_limit_s": 300,
                     "backend": "docker", "formal": True, "retry": {"harness_failure": 0}},
    }  # fmt: skip
    (project / "releases" / "gw.yaml").write_text(yaml.safe_dump(release))
    return project


def _attempts(pipeline: Pipeline, release: str) -> list[Cell]:
    return [c for c in walk([pipeline.roots[release]]) if c.kind == "attempt"]


def test_the_price_digest_keys_gateway_attempts_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path)
    monkeypatch.setenv("RECON_STORE", str(project / "store"))
    pipeline = Pipeline(Project.open(project, Settings.from_env()))
    (gateway,) = _attempts(pipeline, "gw")
    assert gateway.params["prices"] == prices_digest()
    before = {c.id: c.params for c in _attempts(pipeline, "2025q1")}
    gateway = ("claude-code", "claude-code-scripted", "codex-cli", "codex-scripted")
    gateway += ("gemini-cli", "gemini-cli-scripted", "aider", "aider-scripted")
    on_gateway = {i for i, p in before.items() if p["entry"] in gateway}
    assert len(on_gateway) == 80 and len(before) == 120
    for ident, params in before.items():
        assert set(params) == OLD_PARAMS | ({"prices"} if ident in on_gateway else set())
    pipeline.rt.close()

    monkeypatch.setattr("recon.pipeline.graph.prices_digest", lambda: "f" * 64)
    again = Pipeline(Project.open(project, Settings.from_env()))
    (moved,) = _attempts(again, "gw")
    assert moved.params["prices"] == "f" * 64  # a new price table re-keys gateway attempts
    after = {c.id: c.params for c in _attempts(again, "2025q1")}
    moved_ids = {i for i in before if after[i] != before[i]}
    assert moved_ids == on_gateway  # and no other
    again.rt.close()


def test_the_recording_is_run_metadata() -> None:
    assert RUN_METADATA["attempt"] == ("run", "gateway")


def _build(project: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Pipeline, Pointer]:
    for name, value in KEYS.items():
        monkeypatch.setenv(name, value)
    pipeline, (pointer,) = _build_all(project, monkeypatch)
    return pipeline, pointer


def _build_all(
    project: Path, monkeypatch: pytest.MonkeyPatch, executor: ExecutorChoice | None = None
) -> tuple[Pipeline, list[Pointer]]:
    """Every attempt of the release and what it reads, one after the other; on
    ``executor`` (else in process)."""
    monkeypatch.setenv("RECON_STORE", str(project / "store"))
    # The offline dependency store `make test` fetched (as doit_env gives every doit run).
    monkeypatch.setenv("RECON_DEPS", doit_env(project)["RECON_DEPS"])
    pipeline = Pipeline(Project.open(project, Settings.from_env()), executor=executor)
    attempts = _attempts(pipeline, "gw")
    for attempt in attempts:
        for cell in walk([attempt]):
            run_cell(pipeline.rt, cell)
    return pipeline, [pipeline.rt.require_pointer(a) for a in attempts]


def _record(pipeline: Pipeline, pointer: Pointer) -> AttemptRecord:
    return AttemptRecord.model_validate(
        pipeline.rt.store.read_json(pointer.outputs["record"].digest)
    )


@pytest.mark.docker
def test_a_scripted_entry_runs_end_to_end_through_the_gateway(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path)
    pipeline, pointer = _build(project, monkeypatch)
    record = _record(pipeline, pointer)
    assert record.outcome == "valid", record.reason
    recording = Recording.model_validate(
        pipeline.rt.store.read_json(pointer.outputs["gateway"].digest)
    )
    streams = [(e.protocol, e.stream) for e in recording.exchanges]
    assert len(streams) >= 7 and len(set(streams)) == 7  # every protocol, streamed and not
    assert recording.outcome is None and all(e.status == 200 for e in recording.exchanges)
    script = CaseScripts.from_answers(project / "entries" / ANSWERS, KIND)
    expected = Usage()
    for exchange in recording.exchanges:  # what the scripted upstream reports, recomputed
        text = script.reply(chat_view(exchange.protocol, exchange.request))
        assert text is not None
        assert exchange.usage == scripted_usage(exchange.protocol, exchange.request, text)
        expected = expected + exchange.usage
    assert recording.usage == expected  # the gateway's totals, exactly
    assert record.model_use is not None
    assert record.model_use.usage == recording.usage
    assert record.model_use.tokens == recording.usage.tokens
    assert record.model_use.calls == len(recording.exchanges)
    assert record.model_use.cost_usd == recording.cost_usd
    (attempt,) = _attempts(pipeline, "gw")
    assert recording.prices_digest == prices_digest() == attempt.params["prices"]
    built = tmp_path / "built"
    checkout_tree(pipeline.rt.store, pointer.outputs["build"].digest, built)
    answer = project / "entries" / ANSWERS / CASE / KIND
    for path in answer.rglob("*"):
        if path.is_file():
            assert (built / path.relative_to(answer)).read_bytes() == path.read_bytes()
    environ = (built / "environ.bin").read_bytes().split(b"\0")
    assert b"ANTHROPIC_BASE_URL=http://127.0.0.1:3129" in environ
    tokens = {v for v in environ if v.startswith((b"ANTHROPIC_API_KEY=", b"GEMINI_API_KEY="))}
    assert len({t.split(b"=", 1)[1] for t in tokens}) == 1  # the one per-attempt token
    _no_key_anywhere(project)
    pipeline.rt.close()


def _no_key_anywhere(project: Path) -> None:
    """No byte of any key in any store object, pointer or record."""
    found = []
    for path in (project / "store").rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            found += [(path, n) for n, key in KEYS.items() if key.encode() in data]
    assert not found


@pytest.mark.docker
def test_a_spent_token_budget_is_the_recorded_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path, tokens=300, cost_usd=None)
    pipeline, pointer = _build(project, monkeypatch)
    record = _record(pipeline, pointer)
    assert record.outcome == "timeout"
    assert record.reason.startswith("model budget: token budget spent: ")
    assert not pointer.retry and "build" not in pointer.outputs  # kept, excluded, final
    assert record.model_use is not None and record.model_use.tokens >= 300
    _no_key_anywhere(project)
    pipeline.rt.close()


TIMINGS = ("started_s", "first_byte_ms", "total_ms")


def _untimed(pipeline: Pipeline, pointer: Pointer) -> dict[str, Any]:
    """The attempt's recording without its timings (they are per run)."""
    recording: dict[str, Any] = pipeline.rt.store.read_json(pointer.outputs["gateway"].digest)
    for exchange in recording["exchanges"]:
        for name in TIMINGS:
            exchange.pop(name)
        for tried in exchange["tries"]:
            tried.pop("ms")
    return recording


def _token(pipeline: Pipeline, pointer: Pointer, tmp_path: Path) -> bytes:
    """The token the attempt's agent was given (its environment, as it wrote it)."""
    built = tmp_path / pointer.outputs["build"].digest
    checkout_tree(pipeline.rt.store, pointer.outputs["build"].digest, built)
    environ = (built / "environ.bin").read_bytes().split(b"\0")
    (token,) = {v.split(b"=", 1)[1] for v in environ if v.startswith(b"ANTHROPIC_API_KEY=")}
    return token


def _not_here(*args: object) -> None:
    raise AssertionError("the attempt ran in the coordinator's process, not on a Ray worker")


@pytest.mark.docker
@pytest.mark.slow
def test_on_a_ray_worker_the_attempt_meters_and_records_what_it_does_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here, mine = _build(_project(tmp_path / "here"), monkeypatch)
    expected = (_record(here, mine).model_use, _untimed(here, mine))
    tokens = {_token(here, mine, tmp_path)}
    here.rt.close()
    for name in KEYS:  # the keys are the Ray node's own, never the coordinator's
        monkeypatch.delenv(name)
    monkeypatch.setattr("recon.pipeline.kinds.attempt.attempt", _not_here)
    with ray_cluster(cpus=2, docker=1, node_env=KEYS) as cluster:
        for name, value in cluster.env.items():
            monkeypatch.setenv(name, value)
        ray = ExecutorChoice("ray", cluster.address)
        there, pointers = _build_all(_project(tmp_path / "ray", repeats=2), monkeypatch, ray)
        for pointer in pointers:  # two attempts, each with a gateway of its own
            record = _record(there, pointer)
            assert record.outcome == "valid", record.reason
            assert (record.model_use, _untimed(there, pointer)) == expected
            tokens.add(_token(there, pointer, tmp_path))
        there.rt.close()
    assert len(tokens) == 3
    _no_key_anywhere(tmp_path / "ray" / "p")


CANARY = b"sk-ant-canary+5e/7c=d41f9b0a"
"""A key in the host environment of the build: with ``+``, ``/`` and ``=``, so that its
URL-encoded and base64 forms differ from it."""


def _files(*roots: Path) -> Iterator[Path]:
    for root in roots:
        yield from (p for p in root.rglob("*") if p.is_file() and not p.is_symlink())


def _anthropic(entry: dict[str, Any]) -> None:
    """The test entry as a live Anthropic entry: Messages only, the key in
    ``agent.credentials`` alone (never in ``agent.env``)."""
    entry["model"] = {"provider": "anthropic", "name": "claude-haiku-4-5", "version": "1"}
    entry["agent"]["command"] += ["anthropic"]
    entry["agent"]["env"] = []
    entry["agent"]["credentials"] = ["ANTHROPIC_API_KEY"]
    entry["agent"]["gateway"] = {"ANTHROPIC_BASE_URL": ""}


@pytest.mark.docker
def test_a_canary_key_is_in_no_byte_of_the_release(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    test_ca: CertAuthority,  # noqa: F811
    server_tls: ssl.SSLContext,  # noqa: F811
) -> None:
    """The live path as a maintainer runs it: ``doit release:gw`` with the key in the host
    environment and the harness-side settings pointing Anthropic at a local TLS server (a
    test CA, verified), which answers the case's faithful script. Then every file of the
    store, ``releases/`` and the site is scanned for the key in any form."""
    case = "html5-boilerplate"  # the cheapest case to render and grade
    project = _project(tmp_path, case, _anthropic)
    script = CaseScripts.from_answers(project / "entries" / ANSWERS, KIND)
    assert not any(form in p.read_bytes() for p in _files(project) for form in key_forms(CANARY))
    with vendor_api(Vendor(script=script), server_tls) as vendor:
        monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY.decode())
        monkeypatch.setenv("RECON_ANTHROPIC_BASE_URL", f"https://127.0.0.1:{vendor.port}")
        monkeypatch.setenv("RECON_LIVE_CA", str(test_ca.ca))
        doit(project, "release:gw")
    assert vendor.headers and all(h["x-api-key"] == CANARY.decode() for h in vendor.headers)
    result = json.loads((project / "releases" / "gw" / "release.json").read_text())
    (attempt,) = result["attempts"]
    assert attempt["outcome"] == "valid" and attempt["total"] is not None, attempt
    monkeypatch.setenv("RECON_STORE", str(project / "store"))
    pipeline = Pipeline(Project.open(project, Settings.from_env()))
    (cell,) = _attempts(pipeline, "gw")
    assert cell.params["upstream"] == f"https://127.0.0.1:{vendor.port}"  # another upstream
    pointer = pipeline.rt.require_pointer(cell)
    recording = Recording.model_validate(
        pipeline.rt.store.read_json(pointer.outputs["gateway"].digest)
    )
    assert recording.upstream == "live" and len(recording.exchanges) == len(vendor.headers)
    assert {(e.protocol, e.stream) for e in recording.exchanges} == {
        ("anthropic", False), ("anthropic", True)
    }  # fmt: skip
    built = tmp_path / "built"
    checkout_tree(pipeline.rt.store, pointer.outputs["build"].digest, built)
    environ = (built / "environ.bin").read_bytes().split(b"\0")  # the agent's own
    assert b"ANTHROPIC_BASE_URL=http://127.0.0.1:3129" in environ
    assert any(v.startswith(b"ANTHROPIC_API_KEY=") for v in environ)
    pipeline.rt.close()
    scanned = list(_files(project / "store", project / "releases", built))
    assert any(p.name == "index.html" for p in scanned if "site" in p.parts)
    assert len(scanned) > 50
    found = [(p, f) for p in scanned for f in key_forms(CANARY) if f in p.read_bytes()]
    assert not found
