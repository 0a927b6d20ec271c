"""Failures the harness causes: the docker engine goes away in the middle of a formal release.

The machine's dockerd is shared, so it is not stopped. The doit build (``-n 2 -P thread``)
reaches the engine through a unix-socket forwarder of this test (``DOCKER_HOST``). The test
takes the forwarder down once one attempt has finished while another is in flight: live
connections are closed and the socket removed, which is what a build sees when the engine
stops. The attempts running or starting then must become harness failures (excluded from
scores, counted in reliability, never a model failure); the next build, with the forwarder
back, re-runs exactly those attempts, and they are valid.

The in-flight attempt is the ``scripted-hold`` entry: while the host forwards
``RECON_TEST_HOLD=1`` (the first build) its agent waits until its container is removed; in
the second build it finishes at once. A forwarded value is not part of the entry digest,
so the retried attempt keeps its key. The builds run with ``TMPDIR`` in a folder of this
test, which is how the test tells its own attempt containers (their bind mounts come from
there) from those of concurrent sessions on the same engine.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from recon.errors import HarnessError
from recon.project.settings import Settings
from recon.sandbox import engine_client, ensure_engine, ensure_image
from recon.sandbox.engine import engine_url
from tests.conftest import Build, copy_project, deps_root, doit, doit_env

pytestmark = [pytest.mark.docker, pytest.mark.browser, pytest.mark.slow]

RELEASE = "outage"
ENTRIES = ("scripted-faithful", "scripted-hold", "scripted-starter")
HOLD = "attempt:outage-docker.scripted-hold.html5-boilerplate.0"
FORMAL = f"""schema_version: 1
id: {RELEASE}
title: Formal release whose engine goes away mid-build
cases: [html5-boilerplate]
entries: [{", ".join(ENTRIES)}]
protocol:
  name: outage-docker
  repeats: 1
  time_limit_s: 60
  backend: docker
  formal: true
  retry: {{harness_failure: 2}}
aggregation: {{rule: case-mean-v1}}
"""
HOLD_AGENT = """import os, time
while os.environ.get("RECON_TEST_HOLD") == "1":
    time.sleep(0.1)
print("turns: 1")
"""


class EngineForwarder:
    """Relays a unix socket to the engine's until ``stop()``, which closes every live
    connection and removes the socket (new connections fail as with a stopped engine)."""

    def __init__(self, path: Path, upstream: str) -> None:
        self.path = path
        self.upstream = upstream
        self.accepted = 0
        self._live: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._server: socketserver.ThreadingUnixStreamServer | None = None

    def start(self) -> None:
        forwarder = self

        class Relay(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                forwarder._relay(self.request)

        self.path.unlink(missing_ok=True)
        server = socketserver.ThreadingUnixStreamServer(str(self.path), Relay)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        self._server = server

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        self.path.unlink(missing_ok=True)
        with self._lock:
            live, self._live = list(self._live), set()
        for sock in live:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def _relay(self, client: socket.socket) -> None:
        upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with self._lock:
            if self._server is None:
                return
            self.accepted += 1
            self._live.update((client, upstream))
        try:
            upstream.connect(self.upstream)
            _pump(client, upstream)
        except OSError:
            pass
        finally:
            with self._lock:
                self._live.difference_update((client, upstream))
            upstream.close()


def _pump(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until both sides have finished (half-closes passed on)."""
    peer = {a: b, b: a}
    open_ = [a, b]
    while open_:
        readable, _, _ = select.select(open_, [], [])
        for sock in readable:
            data = sock.recv(65536)
            if data:
                peer[sock].sendall(data)
                continue
            open_.remove(sock)
            with contextlib.suppress(OSError):
                peer[sock].shutdown(socket.SHUT_WR)


@pytest.fixture(scope="module")
def engine() -> docker.DockerClient:
    try:
        settings = Settings.from_env()
        ensure_engine(state_dir=settings.engine_state)
        ensure_image(
            deps_root=deps_root(), cache_dir=settings.apt_cache
        )  # cached on its recipe tag; built once, cold
    except HarnessError as err:
        pytest.skip(f"no docker engine or sandbox image here: {err}")
    return engine_client()


@pytest.fixture
def forwarder(tmp_path: Path, engine: docker.DockerClient) -> Iterator[EngineForwarder]:
    url = engine_url()
    if not url.startswith("unix://"):
        pytest.skip(f"the engine is at {url}; this test forwards a unix socket")
    fwd = EngineForwarder(tmp_path / "engine" / "docker.sock", url.removeprefix("unix://"))
    fwd.path.parent.mkdir()
    fwd.start()
    try:
        yield fwd
    finally:
        fwd.stop()


def formal_project(root: Path) -> Path:
    """The demo case and scripted entries switched to the docker backend; one release."""
    project = copy_project(root)
    for release in (project / "releases").glob("*.yaml"):
        release.unlink()
    (project / "releases" / f"{RELEASE}.yaml").write_text(FORMAL)
    entries = project / "entries"
    (entries / "scripted/hold.py").write_text(HOLD_AGENT)
    starter = (entries / "scripted-starter.yaml").read_text()
    hold = starter.replace("scripted-starter", "scripted-hold").replace("starter.py", "hold.py")
    hold = hold.replace(
        "  files: [scripted/hold.py]\n", "  files: [scripted/hold.py]\n  env: [RECON_TEST_HOLD]\n"
    )
    assert "RECON_TEST_HOLD" in hold
    (entries / "scripted-hold.yaml").write_text(hold)
    for name in ENTRIES:
        path = entries / f"{name}.yaml"
        native = "sandbox: {backend: native}"
        assert native in path.read_text()
        path.write_text(path.read_text().replace(native, "sandbox: {backend: docker}"))
    return project


@pytest.fixture
def attempt_tmp() -> Iterator[Path]:
    """The builds' ``TMPDIR``: short (the egress socket's path must fit ``AF_UNIX``)."""
    with tempfile.TemporaryDirectory(prefix="rc-", dir="/tmp") as folder:
        yield Path(folder)


def containers(client: docker.DockerClient, tmp: Path) -> list[str]:
    """Ids of this test's attempt containers (their mounts come from ``tmp``). One list
    call: the high-level list inspects each container after listing, racing their removal."""
    found = []
    for row in client.api.containers(all=True, filters={"label": "recon.sandbox"}):
        sources = [str(m.get("Source", "")) for m in row.get("Mounts", [])]
        if any(source.startswith(f"{tmp}/") for source in sources):
            found.append(str(row["Id"]))
    return found


def processes(answer: dict[str, Any] | None) -> list[list[str]]:
    """The rows of the engine's ``top`` answer. A container being removed (an attempt that
    just finished) can be answered with ``"Processes": null``: the engine checked it was
    running, then its processes were gone when it ran ``ps``."""
    return list((answer or {}).get("Processes") or [])


def holding(client: docker.DockerClient, tmp: Path) -> bool:
    """The hold agent is running in one of this test's containers."""
    for container in containers(client, tmp):
        with contextlib.suppress(docker.errors.DockerException):
            for row in processes(client.api.top(container)):
                if "scripted/hold.py" in " ".join(row):
                    return True
    return False


def build_with_outage(
    project: Path, fwd: EngineForwarder, client: docker.DockerClient, tmp: Path
) -> tuple[Build, list[str]]:
    """``doit -n 2 -P thread release:<id>``; the forwarder goes down once an attempt has
    finished and the hold agent runs. Returns the build and the cells finished by then."""
    env = {**doit_env(project), "DOCKER_HOST": f"unix://{fwd.path}", "TMPDIR": str(tmp)}
    env["RECON_TEST_HOLD"] = "1"
    proc = subprocess.Popen(
        [sys.executable, "-m", "doit", "-n", "2", "-P", "thread", f"release:{RELEASE}"],
        cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: list[str] = []
    assert proc.stderr is not None
    reader = threading.Thread(target=lines.extend, args=(proc.stderr,))
    reader.start()
    finished: list[str] = []
    while proc.poll() is None:
        ran = [ln.split()[2] for ln in list(lines) if ln.startswith("[recon] ran")]
        if any(c.startswith("attempt:") for c in ran) and holding(client, tmp):
            fwd.stop()  # the engine goes away
            finished = ran
            break
        time.sleep(0.1)
    stdout = proc.stdout.read() if proc.stdout is not None else ""
    proc.wait()
    reader.join()
    return Build(proc.returncode, stdout, "".join(lines)), finished


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())


def attempt_records(project: Path) -> dict[str, dict[str, Any]]:
    """Each attempt cell's record, read through its pointer from the store."""
    found = {}
    for pointer in sorted((project / "store/cells/attempt").glob("*.json")):
        data = read_json(pointer)
        record, run = (data["outputs"][k]["digest"] for k in ("record", "run"))
        blobs = [read_json(project / "store/objects" / d[:2] / d) for d in (record, run)]
        found[f"attempt:{data['name']}"] = {
            **blobs[0],
            "image_id": blobs[1]["image_id"],
            "retry": data.get("retry", False),
        }
    return found


def attempt_keys(project: Path) -> dict[str, str]:
    return {
        f"attempt:{p.stem}": read_json(p)["key"]
        for p in sorted((project / "store/cells/attempt").glob("*.json"))
    }


def test_engine_stopped_mid_release_gives_harness_failures_retried_next_build(
    tmp_path: Path,
    engine: docker.DockerClient,
    forwarder: EngineForwarder,
    attempt_tmp: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project = formal_project(tmp_path / "p")
    first, finished = build_with_outage(project, forwarder, engine, attempt_tmp)
    assert first.code == 0, first.stdout + first.stderr
    assert forwarder.accepted > 0  # the build did reach the engine through the forwarder
    assert finished, first.stderr  # the outage came after an attempt, with one in flight
    # The cut attempt's container outlives the harness's contact with the engine (a real
    # engine stop would have stopped it); the test removes it.
    leftovers = containers(engine, attempt_tmp)
    for container in leftovers:
        with contextlib.suppress(docker.errors.NotFound):
            engine.api.remove_container(container, force=True)

    records = attempt_records(project)
    keys = attempt_keys(project)
    assert len(records) == len(ENTRIES)
    failed = sorted(a for a, r in records.items() if r["outcome"] == "harness_failure")
    kept = sorted(a for a, r in records.items() if r["outcome"] == "valid")
    assert HOLD in failed  # cut mid-attempt: the harness's failure, not the agent's
    assert set(finished) & set(records) <= set(kept)  # finished before the outage: kept
    assert kept and sorted(failed + kept) == sorted(records), records
    assert 1 <= len(leftovers) <= len(failed)  # one per attempt cut while in flight
    for name in failed:
        record = records[name]
        assert record["retry"] is True and record["formal"] is True
        assert record["reason"].startswith("harness:") and "docker engine" in record["reason"]
    for name in kept:
        assert records[name]["retry"] is False and records[name]["backend"] == "docker"

    release = read_json(project / f"releases/{RELEASE}/release.json")
    assert release["formal"] is True
    reliability = release["reliability"]["overall"]
    assert reliability["by_outcome"] == {
        "harness_failure": len(failed),
        "valid": len(kept),
    }  # no missing, ungradeable or timeout: the model is not blamed for the engine
    assert reliability["harness_failure_rate"] == len(failed) / len(ENTRIES)
    summaries = {f"attempt:{a['id']}": a for a in release["attempts"]}
    results = {e["entry"]: e for e in release["entries"]}
    for name in failed:
        assert summaries[name]["outcome"] == "harness_failure"
        assert summaries[name]["total"] is None  # never scored
        entry = results[summaries[name]["entry"]]
        assert entry["score"] is None and entry["ranked"] is False
        assert entry["cases"][0]["attempts"] == {"harness_failure": 1}
    for name in kept:
        entry = results[summaries[name]["entry"]]
        assert entry["ranked"] is True and entry["score"] == summaries[name]["total"] > 0

    # The engine is back: the next build re-runs exactly the failed attempts.
    forwarder.start()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{forwarder.path}")
    monkeypatch.setenv("TMPDIR", str(attempt_tmp))
    monkeypatch.delenv("RECON_TEST_HOLD", raising=False)  # the hold agent finishes at once
    second = doit(project, f"release:{RELEASE}")
    assert sorted(c for c in second.ran if c.startswith("attempt:")) == failed, second.stderr
    assert second.executed["attempt"] == len(failed)
    after = attempt_records(project)
    assert {a: r["outcome"] for a, r in after.items()} == dict.fromkeys(records, "valid")
    assert all(after[name] == records[name] for name in kept)  # untouched
    # Same workspace, entry, protocol and index: the same key (the retry re-ran the cell
    # because its pointer said so, not because anything re-keyed it); the image is named.
    assert attempt_keys(project) == keys
    assert all(str(r["image_id"]).startswith("sha256:") for r in after.values())
    release = read_json(project / f"releases/{RELEASE}/release.json")
    reliability = release["reliability"]["overall"]
    assert reliability["by_outcome"] == {"valid": len(ENTRIES)}
    # every try counts: the failed first tries stay in the reliability statistics
    assert reliability["tries"] == len(ENTRIES) + len(failed)
    assert reliability["harness_failures"] == reliability["retries"] == len(failed)
    assert all(e["ranked"] for e in release["entries"])
    assert containers(engine, attempt_tmp) == []
    assert not list(attempt_tmp.iterdir())  # every attempt's folders were removed

    third = doit(project, f"release:{RELEASE}")  # and then nothing is pending
    assert third.ran == [] and sum(third.executed.values()) == 0, third.stdout


def test_top_of_a_container_being_removed_reads_as_no_processes() -> None:
    """Recorded from docker 20.10: ``top`` polled while ``remove(force=True)`` ran answered
    this shape in 34 of 250 polls over 40 removals (the cause of this module's flake, a
    ``TypeError``)."""
    titles = ["UID", "PID", "PPID", "C", "STIME", "TTY", "TIME", "CMD"]
    assert processes({"Processes": None, "Titles": titles}) == []
    assert processes(None) == []
    row = ["1000", "42", "1", "0", "10:00", "?", "00:00:00", "python3 /entry/scripted/hold.py"]
    assert processes({"Processes": [row], "Titles": titles}) == [row]
