"""The docker backend's boundaries as an attacker tries them: egress outside the agent step
or to another host than the tunnel names, and processes that try to outlive the attempt."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from recon.model import BuildStep
from recon.sandbox import ImageBuild, Mount
from recon.sandbox import docker as docker_mod
from tests.sandbox.conftest import BUDGET, attempt
from tests.sandbox.local_http import serve

pytestmark = pytest.mark.docker

PROBE = r"""
import json, os, socket, sys, urllib.request as u
step, port = sys.argv[1], int(sys.argv[2])
seen = {}
def ask(name, connect, send):
    try:
        s = connect()
        s.settimeout(10)
        s.sendall(send)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        seen[name] = data.decode(errors="replace")
    except OSError as err:
        seen[name] = "error: " + str(err)
def unix():
    s = socket.socket(socket.AF_UNIX)
    s.connect("/recon/egress.sock")
    return s
get = f"GET http://127.0.0.1:{port}/{step} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
ask("socket", unix, get)
ask("bridge", lambda: socket.create_connection(("127.0.0.1", 3128), timeout=5), get)
try:
    seen["proxied"] = u.urlopen(f"http://127.0.0.1:{port}/{step}-env", timeout=10).read().decode()
except Exception as err:
    seen["proxied"] = "error: " + str(err)
evil = f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"
ask("evil_host", unix, evil.encode())
os.makedirs("dist", exist_ok=True)
open(f"dist/{step}.json", "w").write(json.dumps(seen))
"""


@pytest.fixture
def model_api() -> Iterator[tuple[int, list[str]]]:
    paths: list[str] = []

    def body(path: str) -> bytes:
        paths.append(path)
        return f"model api saw {path}".encode()

    with serve(body) as port:
        yield port, paths


@pytest.fixture
def probe(tmp_path: Path) -> Mount:
    folder = tmp_path / "probe"
    folder.mkdir(mode=0o755)
    (folder / "probe.py").write_text(PROBE)
    return Mount(folder, "/probe")


def test_egress_is_for_the_agent_step_only_and_to_the_named_host_only(
    engine: docker.DockerClient,
    image: ImageBuild,
    tmp_path: Path,
    model_api: tuple[int, list[str]],
    probe: Mount,
    healthy: None,
) -> None:
    port, paths = model_api
    run_probe = f"python3 /probe/probe.py {{}} {port}"
    build = BuildStep(command=["sh", "-c", run_probe.format("build")], output="dist")
    run = attempt(engine, image, tmp_path, run_probe.format("agent"), build=build,
                  egress=[f"127.0.0.1:{port}"], mounts=[probe])  # fmt: skip
    assert run.outcome == "valid", (run.reason, run.logs)
    assert run.output is not None
    agent = json.loads((run.output / "agent.json").read_text())
    build_seen = json.loads((run.output / "build.json").read_text())
    # The agent reaches the allowed host through the socket, the bridge and its proxy env.
    assert agent["socket"].endswith("model api saw /agent"), agent
    assert agent["bridge"].endswith("model api saw /agent"), agent
    assert agent["proxied"] == "model api saw /agent-env", agent
    # A tunnel to the allowed address that asks for another host is refused.
    assert agent["evil_host"].count("403") == 1 and "model api" not in agent["evil_host"]
    # The build step runs offline: no socket, no bridge, no proxy.
    assert "No such file or directory" in build_seen["socket"], build_seen
    assert "Connection refused" in build_seen["bridge"], build_seen
    assert build_seen["proxied"].startswith("error"), build_seen
    assert paths == ["/agent", "/agent", "/agent-env"]  # the upstream saw the agent only
    assert (run.egress["allowed"], run.egress["refused"]) == (3, 1)
    [refused] = [e for e in run.egress["events"] if e["verdict"] == "refused"]
    assert "HTTP Host evil.example differs" in refused["reason"]


# -- every exception becomes an attempt with a reason ------------------------------------


def test_a_proxy_that_cannot_start_is_a_harness_failure(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A temporary folder too deep for a unix socket's path (108 bytes): the proxy cannot
    bind. That is the environment's failure, retried, never a traceback."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    run = attempt(engine, image, tmp_path, "mkdir dist && echo ok > dist/index.html")
    assert run.outcome == "harness_failure"
    assert run.reason.startswith("harness: egress proxy did not start"), run.reason


@pytest.mark.parametrize("error", [ValueError, RuntimeError, KeyError, TypeError])
def test_an_unexpected_exception_is_a_harness_bug_named_in_the_reason(
    healthy: None,  # first: its check runs once the fault below is undone
    engine: docker.DockerClient,
    image: ImageBuild,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    error: type[Exception],
) -> None:
    def broken(self: object) -> None:
        raise error("the harness tripped over itself")

    monkeypatch.setattr(docker_mod._Attempt, "_bridge", broken)
    run = attempt(engine, image, tmp_path, "mkdir dist && echo ok > dist/index.html")
    assert run.outcome == "harness_failure"
    assert run.reason.startswith(f"harness bug: {error.__name__}: "), run.reason
    assert "the harness tripped over itself" in run.reason
    assert run.container_id  # it had started; the healthy fixture checks it is gone


# -- no process of an attempt outlives it -----------------------------------------------

LEAVE_BEHIND = """
setsid sleep {mark}.1 &
sh -c 'trap "" TERM HUP; exec sleep {mark}.2' &
( setsid sh -c 'sleep {mark}.3 & exit 0' & )
sleep 0.5; mkdir -p dist; echo ok > dist/index.html
for p in /proc/[0-9]*; do echo "running: $(tr '\\0' ' ' < $p/cmdline)"; done
"""
KILLED_BUILD = "node -e 'setTimeout(() => {{}}, 1e6)' {mark}.4 & sleep 0.5; kill -9 $$"


def _host_processes(needle: str) -> list[str]:
    """Host processes whose command line or cgroup names ``needle`` (zombies included:
    their cgroup still names the container)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            cgroup = (proc / "cgroup").read_text()
        except OSError:
            continue
        if needle in cmdline or needle in cgroup:
            found.append(f"{proc.name}: {cmdline or '(zombie)'}")
    return found


@pytest.mark.parametrize(("time_limit_s", "hang"), [(30, False), (15, True)])
def test_no_process_of_an_attempt_outlives_it(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, time_limit_s: int, hang: bool
) -> None:
    mark = str(int.from_bytes(os.urandom(2), "big") + 10_000)  # a unique sleep length
    build = BuildStep(command=["sh", "-c", KILLED_BUILD.format(mark=mark)], output="dist")
    script = LEAVE_BEHIND.format(mark=mark)
    if hang:
        script += "sleep 600\n"  # and the agent itself runs past the time limit
    run = attempt(engine, image, tmp_path, script, build=build, time_limit_s=time_limit_s)
    expected = "timeout" if hang else "ungradeable"
    assert run.outcome == expected, (run.reason, run.logs)
    assert run.container_id
    for n in (1, 2, 3):  # they did run
        assert f"running: sleep {mark}.{n}".encode() in run.logs, run.logs
    assert _host_processes(run.container_id) == []
    assert _host_processes(f"sleep {mark}.") == []
    assert _host_processes(f"{mark}.4") == []


# -- outputs: the number of files and the depth are budgeted ---------------------------

MANY_FILES = (
    "python3 -c \"import os; os.makedirs('dist/a'); "
    "[open(f'dist/a/f{i}', 'w').close() for i in range(40_000)]\"; echo hi > dist/index.html"
)
DEEP = "mkdir -p dist/$(seq -s / 1 40) && echo deep > dist/$(seq -s / 1 40)/x && echo hi > dist/i"


def test_40001_output_files_are_refused_cleanly_and_cheaply(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, healthy: None
) -> None:
    run = attempt(engine, image, tmp_path, MANY_FILES, time_limit_s=120)
    assert run.outcome == "ungradeable", run.reason
    assert (
        run.reason == "the build output has more than 20000 files and folders (budget.output_files)"
    )
    assert run.refusals == ["dist: more than 20000 files and folders; budget.output_files is 20000"]
    assert run.output is None
    assert not list(tmp_path.glob("out-0/*"))  # nothing was unpacked on the host


def test_a_deeper_output_than_the_budget_is_refused(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    run = attempt(engine, image, tmp_path, DEEP)
    assert run.outcome == "ungradeable", run.reason
    assert run.reason == "the build output is more than 32 levels deep (budget.output_depth)"
    assert run.refusals == ["dist: a path more than 32 levels deep; budget.output_depth is 32"]
    ok = attempt(
        engine, image, tmp_path, DEEP, budget=BUDGET.model_copy(update={"output_depth": 41})
    )
    assert ok.outcome == "valid", ok.reason
    assert ok.output is not None and (ok.output / "/".join(map(str, range(1, 41))) / "x").is_file()
