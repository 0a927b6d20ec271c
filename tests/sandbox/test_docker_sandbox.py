"""The docker backend against a real engine and the real offline image.

The engine is started when none answers (``ensure_engine``); these tests skip only when no
engine can start, with the reason printed by ``-ra``. The image is built once per session,
and across sessions it is a cache hit on its recipe tag.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from recon.errors import HarnessError
from recon.model import BuildStep
from recon.project.settings import Settings
from recon.sandbox import (
    DockerRun,
    ImageBuild,
    ImageRecipe,
    Mount,
    build_image,
    engine_client,
    ensure_engine,
    run_docker,
)
from recon.sandbox import docker as docker_mod
from recon.sandbox.rootfs import host_arch
from tests.conftest import deps_root
from tests.sandbox.conftest import BUDGET, MB, NO_BUILD, attempt
from tests.sandbox.local_http import serve

# -- the engine and the image ------------------------------------------------------------


def test_engine_down_is_a_clear_harness_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(HarnessError, match=r"not answering at unix:///nonexistent.*make test"):
        engine_client()


def test_engine_down_makes_a_harness_failure_not_a_model_failure(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    (tmp_path / "ws").mkdir()
    run = run_docker(tmp_path / "ws", ["true"], BUDGET, 10, "recon-sandbox:x", build=NO_BUILD,
                     out=tmp_path / "out")  # fmt: skip
    assert run.outcome == "harness_failure"
    assert "docker engine not answering" in run.reason


@pytest.mark.docker
def test_image_is_a_cache_hit_the_second_time(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    where = {"deps_root": deps_root(), "cache_dir": Settings.from_env().apt_cache}
    again = build_image(ImageRecipe(arch=host_arch()), tmp_path, engine, **where)
    assert again.cached and again.took_s < 5
    assert again.image_id == image.image_id and again.image_id.startswith("sha256:")
    assert again.tag == f"recon-sandbox:{again.recipe_digest[:12]}"
    assert again.packages_digest == image.packages_digest != ""
    assert not list(tmp_path.iterdir())  # nothing was built
    other = ImageRecipe(arch=host_arch(), packages=("python3",))
    assert other.digest != again.recipe_digest  # the recipe names the image


@pytest.mark.docker
def test_missing_image_is_a_harness_failure(engine: docker.DockerClient, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    run = run_docker(tmp_path / "ws", ["true"], BUDGET, 10, "recon-sandbox:000000000000",
                     build=NO_BUILD, out=tmp_path / "out", client=engine)  # fmt: skip
    assert run.outcome == "harness_failure"
    assert "missing from the engine" in run.reason


# -- attempts that go right --------------------------------------------------------------


@pytest.mark.docker
def test_valid_attempt_runs_agent_then_build_and_extracts_output(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    script = (
        "set -e; id -u > uid.txt; mkdir -p src/css; echo '<h1>hi</h1>' > src/index.html; "
        "echo 'h1{}' > src/css/a.css; ln -s index.html src/alias.html; "
        "echo 'turns: 4'; echo 'tool_calls: 9'; node --version; python3 --version; git --version"
    )
    build = BuildStep(command=["sh", "-c", "cp -a src dist && test $(cat uid.txt) = 1000"],
                      output="dist")  # fmt: skip
    run = attempt(engine, image, tmp_path, script, build=build)
    assert run.outcome == "valid", (run.reason, run.logs)
    assert run.output is not None
    files = sorted(str(p.relative_to(run.output)) for p in run.output.rglob("*") if p.is_file())
    assert files == ["alias.html", "css/a.css", "index.html"]
    assert (run.output / "alias.html").read_text() == "<h1>hi</h1>\n"  # a copy, not a link
    assert run.trace.turns == 4 and run.trace.tool_calls == 9
    assert run.image_id == image.image_id
    assert b"== build ==" in run.logs and b"v18" in run.logs  # Debian's nodejs
    assert run.refusals == []


@pytest.mark.docker
def test_secrets_reach_the_agent_but_never_the_logs(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    secret = "sk-test-0123456789"
    script = 'echo "key=$MODEL_API_KEY"; echo "len=${#MODEL_API_KEY}"'
    run = attempt(engine, image, tmp_path, script, env={"MODEL_API_KEY": secret}, secrets=[secret])
    assert secret.encode() not in run.logs
    assert b"key=***" in run.logs and f"len={len(secret)}".encode() in run.logs


# -- adversarial candidates ----------------------------------------------------------------


@pytest.mark.docker
def test_fork_bomb_is_contained(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, healthy: None
) -> None:
    run = attempt(engine, image, tmp_path, ":(){ :|:& };:")
    # pids capped the bomb; the agent's shell exits at once (0, or an error when the bomb
    # already holds every pid), the bomb it left behind is frozen and killed; no submission.
    # Either way a Candidate failure: never a timeout, never the harness's.
    assert run.outcome in ("ungradeable", "missing"), run.reason
    assert run.reason in ("the build left no output in dist/",) or "agent exited" in run.reason
    assert b"fork: retry" in run.logs or b"Resource temporarily unavailable" in run.logs
    assert run.duration_s < 20


@pytest.mark.docker
def test_memory_hog_is_killed_and_named(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, healthy: None
) -> None:
    hog = "python3 -c 'x=[]\nwhile True: x.append(bytearray(10**7))'"
    run = attempt(engine, image, tmp_path, hog)
    assert run.outcome == "missing"
    assert run.exit_code == 137
    assert "memory budget of 256 MB was exceeded" in run.reason


@pytest.mark.docker
def test_disk_filler_hits_the_disk_cap(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, healthy: None
) -> None:
    script = "head -c 1000000000 /dev/zero > /tmp/fill; echo fill=$(stat -c %s /tmp/fill); exit 0"
    run = attempt(engine, image, tmp_path, script)
    assert b"No space left on device" in run.logs
    fill = int(run.logs.split(b"fill=")[1].split()[0])
    assert fill <= BUDGET.disk_mb * MB  # /tmp counts against the disk budget
    assert run.outcome == "ungradeable", run.reason


@pytest.mark.docker
def test_a_gigabyte_to_stdout_is_capped_and_stopped(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, healthy: None
) -> None:
    run = attempt(engine, image, tmp_path, "head -c 1000000000 /dev/zero; sleep 30")
    assert run.outcome == "missing"
    assert "more than 1 MB of output" in run.reason
    assert len(run.logs) < BUDGET.output_mb * MB + 4096
    assert run.duration_s < 20


@pytest.mark.docker
def test_sleeping_past_the_time_limit_is_a_timeout(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, healthy: None
) -> None:
    run = attempt(engine, image, tmp_path, "echo started; sleep 600", time_limit_s=3)
    assert run.outcome == "timeout"
    assert "time limit of 3s" in run.reason
    assert 3 <= run.duration_s < 15
    assert b"started" in run.logs


@pytest.mark.docker
def test_build_step_past_the_time_limit_is_a_timeout(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    build = BuildStep(command=["sleep", "600"], output="dist")
    run = attempt(engine, image, tmp_path, "true", time_limit_s=3, build=build)
    assert run.outcome == "timeout" and "build step" in run.reason


@pytest.mark.docker
def test_failing_build_is_ungradeable(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    build = BuildStep(command=["sh", "-c", "echo vite: not found; exit 127"], output="dist")
    run = attempt(engine, image, tmp_path, "true", build=build)
    assert run.outcome == "ungradeable" and "build step exited with status 127" in run.reason


@pytest.fixture
def model_api() -> Iterator[int]:
    with serve(lambda path: b"hello from the model api") as port:
        yield port


EGRESS_PROBE = """
import json, socket, urllib.request as u
port = {port}
seen = {{}}
def get(name, url):
    try:
        seen[name] = u.urlopen(url, timeout=10).read().decode()
    except Exception as err:
        seen[name] = "error: " + str(err)
get("allowed", f"http://127.0.0.1:{{port}}/v1/models")
get("host", "https://api.not-allowed.example/v1")
get("raw_ip", "http://1.1.1.1/")
for name, addr in (("direct_ip", ("1.1.1.1", 80)), ("direct_host", ("127.0.0.1", port))):
    try:
        socket.create_connection(addr, timeout=3)
        seen[name] = "connected"
    except OSError as err:
        seen[name] = "error: " + str(err)
import os
os.makedirs("dist", exist_ok=True)
open("dist/egress.json", "w").write(json.dumps(seen))
"""


@pytest.mark.docker
def test_egress_admits_the_allow_list_only_and_counts(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, model_api: int, healthy: None
) -> None:
    probe = tmp_path / "probe"
    probe.mkdir(mode=0o755)
    (probe / "probe.py").write_text(EGRESS_PROBE.format(port=model_api))
    run = attempt(engine, image, tmp_path, "python3 /probe/probe.py",
                  egress=[f"127.0.0.1:{model_api}"], mounts=[Mount(probe, "/probe")])  # fmt: skip
    assert run.outcome == "valid", (run.reason, run.logs)
    assert run.output is not None
    seen = json.loads((run.output / "egress.json").read_text())
    assert seen["allowed"] == "hello from the model api"
    assert "403" in seen["host"] and "403" in seen["raw_ip"]
    assert seen["direct_ip"].startswith("error")  # --network none: no route at all
    assert seen["direct_host"].startswith("error")  # the host's loopback is not ours
    assert (run.egress["allowed"], run.egress["refused"]) == (1, 2)
    refused = {e["target"] for e in run.egress["events"] if e["verdict"] == "refused"}
    assert refused == {"api.not-allowed.example:443", "1.1.1.1:80"}


@pytest.mark.docker
def test_an_output_with_links_leading_out_and_special_files_is_refused_listing_each(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, healthy: None
) -> None:
    script = (
        "set -e; mkdir -p dist/sub; echo ok > dist/index.html; ln -s /etc/passwd dist/passwd; "
        "ln -s ../../sandbox/home dist/sub/up; mkfifo dist/pipe; "
        "head -c 2097152 /dev/zero > dist/big"
    )
    run = attempt(engine, image, tmp_path, script, file_cap_mb=1)
    assert (run.outcome, run.output) == ("ungradeable", None), run.reason
    assert sorted(run.refusals) == [
        "dist/big: 2097152 bytes is over the per-file cap of 1048576",
        "dist/passwd: link to /etc/passwd is absolute",
        "dist/pipe: fifo refused",
        "dist/sub/up: link to ../../sandbox/home leads outside the output",
    ]
    assert run.reason.startswith(f"the build output was refused: {run.refusals[0]} (and 3 more)")


@pytest.mark.docker
@pytest.mark.parametrize("target", ["/etc", "/nowhere"])  # dangling: the same refusal
def test_output_folder_that_is_a_symlink_is_refused(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, target: str
) -> None:
    run = attempt(engine, image, tmp_path, f"ln -s {target} dist")
    assert run.outcome == "ungradeable"
    assert run.refusals == ["dist: the output folder is a symlink or lies behind one"]
    assert run.reason == f"the build output was refused: {run.refusals[0]}"


@pytest.mark.docker
def test_sealed_material_is_out_of_reach(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, healthy: None
) -> None:
    with tempfile.TemporaryDirectory(prefix="recon-sealed-") as sealed_dir:
        sealed = Path(sealed_dir)
        secret = "sealed-oracle-7f3a9c1e"
        (sealed / "thresholds.yaml").write_text(f"{secret}: 0.42\n")
        script = (
            f"mkdir dist; cat {sealed}/thresholds.yaml > dist/leak.txt 2>&1; "
            f"ls -la {sealed} >> dist/leak.txt 2>&1; grep -rsl {secret} / --exclude-dir=proc "
            "--exclude-dir=sys --exclude-dir=dist >> dist/leak.txt; true"
        )
        run = attempt(engine, image, tmp_path, script, sealed=[sealed], time_limit_s=60)
        assert run.outcome == "valid", run.reason
        assert run.output is not None
        leak = (run.output / "leak.txt").read_text()
        assert "No such file or directory" in leak
        assert leak.count("\n") == 2  # two errors; grep over the whole container found nothing
        assert b"0.42" not in run.logs
        # and the harness itself refuses to mount anything overlapping sealed material
        refused = attempt(engine, image, tmp_path, "true", sealed=[sealed],
                          mounts=[Mount(sealed.parent, "/deps")])  # fmt: skip
        assert refused.outcome == "harness_failure"
        assert "overlaps sealed material" in refused.reason


# -- the engine itself: started when absent, stopped underneath an attempt ---------------


def _stop_dockerd(pid: int) -> None:
    """SIGTERM the dockerd this test started (it stops its containers and containerd)."""
    os.kill(pid, signal.SIGTERM)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


PRIVATE_STATE = Path("/var/lib/recon/test-engine")  # kept: the image is loaded once


@pytest.fixture
def private_engine(engine: docker.DockerClient) -> Iterator[tuple[str, Path]]:
    """A second, private dockerd on its own socket, for ``ensure_engine`` to start and for
    the test to stop. Its data root is kept between sessions (the image is loaded once)."""
    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        pytest.skip("starting a private dockerd needs root and docker.io")
    url = f"unix://{PRIVATE_STATE}/docker.sock"
    PRIVATE_STATE.mkdir(parents=True, exist_ok=True)
    with (PRIVATE_STATE.parent / "test-engine.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # concurrent sessions on one machine take turns
        _stop_private()  # one left running by an interrupted session
        try:
            yield url, PRIVATE_STATE
        finally:
            _stop_private()


def _stop_private() -> None:
    pidfile = PRIVATE_STATE / "dockerd.pid"
    pid = pidfile.read_text().strip() if pidfile.exists() else ""
    cmdline = Path(f"/proc/{pid}/cmdline")
    if pid.isdigit() and cmdline.exists() and str(PRIVATE_STATE) in cmdline.read_text():
        _stop_dockerd(int(pid))


@pytest.mark.docker
def test_engine_is_started_when_absent_and_a_stop_mid_attempt_is_a_harness_failure(
    engine: docker.DockerClient,
    image: ImageBuild,
    tmp_path: Path,
    private_engine: tuple[str, Path],
) -> None:
    url, state = private_engine
    start = ensure_engine(url, state_dir=state)
    assert start.started and start.pid is not None and start.took_s < 60
    assert ensure_engine(url, state_dir=state).started is False  # idempotent
    private = engine_client(url)
    if not private.images.list(name=image.tag):
        for old in private.images.list(name="recon-sandbox"):  # earlier recipes
            private.images.remove(old.id, force=True)
        private.images.load(engine.images.get(image.tag).save(named=True))

    result: list[DockerRun] = []
    runner = threading.Thread(
        target=lambda: result.append(
            attempt(private, image, tmp_path, "echo started; sleep 120", time_limit_s=90)
        )
    )
    runner.start()
    deadline = time.monotonic() + 30
    while not private.containers.list(filters={"label": "recon.sandbox"}):
        assert time.monotonic() < deadline, "the attempt container never started"
        time.sleep(0.2)
    time.sleep(1.0)
    _stop_dockerd(start.pid)  # the engine goes away mid-attempt
    runner.join(timeout=120)
    assert not runner.is_alive()
    run = result[0]
    assert run.outcome == "harness_failure", (run.outcome, run.reason)
    assert run.reason.startswith("harness:")

    # the next build finds no engine, starts one, and the retried attempt is valid
    again = ensure_engine(url, state_dir=state)
    assert again.started
    retry = attempt(engine_client(url), image, tmp_path / "retry", "mkdir dist; echo ok > dist/a")
    assert retry.outcome == "valid", retry.reason


@pytest.mark.docker
def test_concurrent_attempts_do_not_interfere(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    """doit -n 2 -P thread runs two attempts at once on one client."""
    scripts = [
        "mkdir dist; echo one > dist/index.html",
        "sleep 5",
        "mkdir dist; echo three > dist/a",
    ]
    runs: dict[int, DockerRun] = {}

    def go(i: int) -> None:
        limit = 2 if i == 1 else 30
        runs[i] = attempt(engine, image, tmp_path / str(i), scripts[i], time_limit_s=limit)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    outcomes = [runs[i].outcome for i in range(3)]
    assert outcomes == ["valid", "timeout", "valid"], [runs[i].reason for i in range(3)]
    assert runs[0].output is not None and (runs[0].output / "index.html").read_text() == "one\n"


# -- containers a lost harness leaves behind -----------------------------------------------


@pytest.mark.docker
def test_never_started_containers_are_removed_after_a_grace_period(
    engine: docker.DockerClient, image: ImageBuild, monkeypatch: pytest.MonkeyPatch
) -> None:
    container = engine.containers.create(
        image.tag, ["true"], network_mode="none", labels={docker_mod.LABEL: "attempt"}
    )
    try:
        docker_mod.remove_stale_containers(engine)
        assert engine.containers.get(container.id).status == "created"  # within the grace
        monkeypatch.setattr(docker_mod, "CREATED_GRACE_S", 0)
        assert docker_mod.remove_stale_containers(engine) >= 1
        with pytest.raises(docker.errors.NotFound):
            engine.containers.get(container.id)
    finally:
        with contextlib.suppress(docker.errors.NotFound):
            container.remove(force=True)


@pytest.mark.docker
def test_an_attempt_container_cannot_outlive_its_attempt_by_much(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path
) -> None:
    """pid 1 sleeps a bounded time, so a harness that loses the engine leaks nothing forever."""
    before = {c.id for c in engine.containers.list(all=True)}
    runs: list[DockerRun] = []
    worker = threading.Thread(
        target=lambda: runs.append(
            attempt(engine, image, tmp_path, "sleep 3; mkdir dist; echo ok > dist/index.html")
        )
    )
    worker.start()
    commands: list[list[str]] = []
    while worker.is_alive() and not commands:
        for c in engine.containers.list(filters={"label": docker_mod.LABEL}):
            if c.id not in before:
                commands.append(c.attrs["Config"]["Cmd"])
        time.sleep(0.1)
    worker.join()
    assert runs and runs[0].outcome == "valid", runs
    assert commands == [["sleep", str(2 * 30 + docker_mod.LIFETIME_MARGIN_S)]]
