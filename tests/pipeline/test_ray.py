"""Scale-out on Ray (issue 16): a real Ray cluster on 127.0.0.1, started by these tests with
two worker processes, runs the long cells of real doit builds.

- the demo release built on the cluster has a manifest byte-identical to a local build's;
- a worker killed in the middle of an attempt gives one harness failure, one retry, and
  exactly one valid record for the slot;
- the coordinator SIGKILLed at 5 random points (one chain of resumed builds, not 5 cold
  builds): every finished cell is reused, never run again, `recon store verify` is
  clean, the manifest equals a clean build's, and `recon status` polled during the final
  run shows consistent snapshots;
- an attempt asking for more CPUs than the one node has (issue 29): the waiting line after
  wait_s, `recon status` waiting with no eta, Ray's autoscaler line, exit 75 after
  give_up_s with how to resume, and a rerun that runs none of the finished cells again.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from recon.store import Store
from tests.conftest import Build, copy_project, doit_env, recon
from tests.pipeline.raycluster import Cluster, ray_cluster
from tests.pipeline.test_release_build import SLOW_AGENT as SLEEPY_AGENT

pytestmark = [pytest.mark.slow, pytest.mark.browser]

KILLS = 5
SEED = 16


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with ray_cluster(cpus=2) as found:
        yield found


def ray_args(cluster: Cluster) -> list[str]:
    return ["-n", "2", "-P", "thread", "executor=ray", f"address={cluster.address}"]


def ray_env(project: Path, cluster: Cluster) -> dict[str, str]:
    return {**doit_env(project), **cluster.env}


def ray_doit(project: Path, cluster: Cluster, *args: str) -> Build:
    proc = subprocess.run(
        [sys.executable, "-m", "doit", *ray_args(cluster), *args],
        cwd=project, env=ray_env(project, cluster), capture_output=True, text=True,
        timeout=1800,
    )  # fmt: skip
    build = Build(proc.returncode, proc.stdout, proc.stderr)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    return build


def test_ray_build_has_the_local_builds_manifest(
    built_demo: tuple[Path, Build], cluster: Cluster, tmp_path: Path
) -> None:
    project = copy_project(tmp_path / "p")
    build = ray_doit(project, cluster, "release:demo")
    assert f"executor ray: joined {cluster.address}" in build.stderr
    assert "finished, ok; executor ray" in build.stderr
    local = (built_demo[0] / "releases/demo/manifest.json").read_bytes()
    assert (project / "releases/demo/manifest.json").read_bytes() == local
    # Which of two cells with one key runs and which reuses it depends on the schedule.
    every = sorted(built_demo[1].ran + built_demo[1].reused)
    assert sorted(build.ran + build.reused) == every, build.stderr


# Slow enough (6 s) for the test to find it running on a worker and kill that worker.
SLOW_AGENT = SLEEPY_AGENT.replace("time.sleep(1.0)", "time.sleep(6.0)")
assert "time.sleep(6.0)" in SLOW_AGENT


def slow_release(project: Path) -> str:
    """One case, one slow native entry, one attempt; one harness-failure retry allowed."""
    (project / "entries/scripted/slow.py").write_text(SLOW_AGENT)
    entry = (project / "entries/scripted-starter.yaml").read_text()
    (project / "entries/scripted-slow.yaml").write_text(
        entry.replace("scripted-starter", "scripted-slow").replace("starter.py", "slow.py")
    )
    definition = yaml.safe_load((project / "releases/demo.yaml").read_text())
    definition.update(id="slow", cases=["html5-boilerplate"], entries=["scripted-slow"])
    definition["protocol"].update(name="slow-native", repeats=1, retry={"harness_failure": 1})
    (project / "releases/demo.yaml").unlink()
    (project / "releases/slow.yaml").write_text(yaml.safe_dump(definition))
    return "slow-native.scripted-slow.html5-boilerplate.0"


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def ray_worker_running(cluster: Cluster, marker: bytes) -> int | None:
    """The cluster's worker process whose descendant's command line holds ``marker``."""
    workers = set(cluster.worker_pids())
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and marker in _cmdline(int(entry.name)):
            pid = int(entry.name)
            while pid > 1:
                if pid in workers:
                    return pid
                pid = _parent(pid)
    return None


def test_killed_worker_mid_attempt_is_one_harness_failure_then_one_retry(
    cluster: Cluster, tmp_path: Path
) -> None:
    project = copy_project(tmp_path / "p")
    name = slow_release(project)
    proc = subprocess.Popen(
        [sys.executable, "-m", "doit", *ray_args(cluster), "release:slow"],
        cwd=project, env=ray_env(project, cluster), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 600
    worker = None
    while worker is None and time.monotonic() < deadline and proc.poll() is None:
        worker = ray_worker_running(cluster, b"scripted/slow.py")
        time.sleep(0.1)
    if worker is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
        raise AssertionError(f"the slow agent never ran on a Ray worker:\n{out}\n{err}")
    os.kill(worker, signal.SIGKILL)
    out, err = proc.communicate(timeout=1200)
    assert proc.returncode == 0, out + err
    lost = [line for line in err.splitlines() if line.startswith("[recon] lost")]
    assert len(lost) == 1 and f"attempt:{name}" in lost[0] and "retried now" in lost[0], err
    pointer = json.loads((project / f"store/cells/attempt/{name}.json").read_text())
    store = Store(project / "store")
    record = store.read_json(pointer["outputs"]["record"]["digest"])
    assert pointer["retry"] is False
    assert (record["outcome"], record["try_index"]) == ("valid", 1)
    failed = store.read_json(record["retry_of"])
    assert failed["outcome"] == "harness_failure" and failed["try_index"] == 0
    assert "worker lost: WorkerCrashedError" in failed["reason"]
    actions = [json.loads(p.read_text()) for p in (project / "store/actions").glob("*/*.json")]
    mine = [a for a in actions if a["kind"] == "attempt" and a["name"] == name]
    assert len(mine) == 1 and mine[0]["outputs"]["record"] == pointer["outputs"]["record"]
    result = json.loads((project / "releases/slow/release.json").read_text())
    overall = result["reliability"]["overall"]
    assert overall["by_outcome"] == {"valid": 1}
    assert (overall["tries"], overall["retries"], overall["harness_failures"]) == (2, 1, 1)
    check_losses_counted(project, err)


def check_losses_counted(project: Path, err: str) -> None:
    """The one lost attempt, resubmitted, in the progress lines, the summary, `recon status
    --json` and runs.json; never in release.json."""
    assert "failed 0  lost 1 (resubmitted 1)" in err, err
    lost = "workers lost under cells: lost 1 (resubmitted 1): attempt 1 (resubmitted 1)"
    assert lost in err.split("[recon] summary slow", 1)[1], err
    status = json.loads(recon(project, "status", "slow", "--json").stdout)
    counts = {k: (c["lost"], c["resubmitted"]) for k, c in status["kinds"].items()}
    assert counts == {k: (1, 1) if k == "attempt" else (0, 0) for k in status["kinds"]}
    assert lost in recon(project, "status", "slow").stdout
    runs = json.loads((project / "releases/slow/runs.json").read_text())
    assert runs["losses"] == {"attempt": {"lost": 1, "resubmitted": 1}}
    assert b"lost" not in (project / "releases/slow/release.json").read_bytes()


class StatusPoller(threading.Thread):
    """Polls `recon status <release> --json` while a build runs."""

    def __init__(self, project: Path, release: str) -> None:
        super().__init__(daemon=True)
        self.project, self.release = project, release
        self.snapshots: list[dict] = []  # type: ignore[type-arg]
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            done = recon(self.project, "status", self.release, "--json")
            if done.returncode == 0 and done.stdout.startswith("{"):
                self.snapshots.append(json.loads(done.stdout))
            self.halt.wait(0.5)


def killed_run(project: Path, cluster: Cluster, rng: random.Random) -> list[str]:
    """One coordinator run SIGKILLed after a random number of finished cells plus a random
    fraction of a second (so that a kill may land anywhere in a cell); the cells it ran."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "doit", *ray_args(cluster), "release:demo"],
        cwd=project, env=ray_env(project, cluster), stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip
    assert proc.stderr is not None
    wanted, ran = rng.randint(1, 10), []
    for line in proc.stderr:
        if line.startswith("[recon] ran"):
            ran.append(line.split()[2])
            if len(ran) >= wanted:
                break
    time.sleep(rng.uniform(0.0, 1.5))
    with contextlib.suppress(ProcessLookupError):  # it may have finished already
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    for line in proc.stderr:  # what the dead process had already written
        if line.startswith("[recon] ran"):
            ran.append(line.split()[2])
    return ran


def test_coordinator_killed_at_five_random_points_resumes(
    built_demo: tuple[Path, Build], cluster: Cluster, tmp_path: Path
) -> None:
    project = copy_project(tmp_path / "p")
    rng = random.Random(SEED)
    finished: set[str] = set()
    for _ in range(KILLS):
        ran = killed_run(project, cluster, rng)
        assert not finished & set(ran), f"finished cells ran again: {finished & set(ran)}"
        finished |= set(ran)
    poller = StatusPoller(project, "demo")
    poller.start()
    final = ray_doit(project, cluster, "release:demo")
    poller.halt.set()
    poller.join()
    assert not finished & set(final.ran), f"finished cells ran again: {finished & set(final.ran)}"
    local = (built_demo[0] / "releases/demo/manifest.json").read_bytes()
    assert (project / "releases/demo/manifest.json").read_bytes() == local
    verify = recon(project, "store", "verify")
    assert verify.returncode == 0 and "clean" in verify.stdout, verify.stdout + verify.stderr
    check_status_snapshots(poller.snapshots, project)


def check_status_snapshots(snapshots: list[dict], project: Path) -> None:  # type: ignore[type-arg]
    """Each snapshot adds up; done only grows within one build; the last one is finished."""
    final = json.loads(recon(project, "status", "demo", "--json").stdout)
    assert final["finished"] and final["ok"]
    for snap in [*snapshots, final]:
        for counts in snap["kinds"].values():
            done = counts["ran"] + counts["reused"] + counts["uptodate"]
            assert done + counts["running"] + counts["failed"] <= counts["total"], snap
    runs = [s for s in snapshots if s["pid"] == final["pid"]]
    assert runs, "recon status never saw the running build"
    dones = [sum(c["ran"] + c["reused"] + c["uptodate"] for c in s["kinds"].values()) for s in runs]
    assert dones == sorted(dones)
    total = sum(c["total"] for c in final["kinds"].values())
    assert sum(c["ran"] + c["reused"] + c["uptodate"] for c in final["kinds"].values()) == total


def greedy_release(project: Path) -> str:
    """One case, one native entry whose attempt asks for 3 CPUs: the cluster's one node has 2."""
    entry = (project / "entries/scripted-starter.yaml").read_text()
    assert "cpus: 1," in entry
    (project / "entries/scripted-greedy.yaml").write_text(
        entry.replace("scripted-starter", "scripted-greedy").replace("cpus: 1,", "cpus: 3,")
    )
    definition = yaml.safe_load((project / "releases/demo.yaml").read_text())
    definition.update(id="greedy", cases=["html5-boilerplate"], entries=["scripted-greedy"])
    definition["protocol"].update(name="greedy-native", repeats=1)
    (project / "releases/demo.yaml").unlink()
    (project / "releases/greedy.yaml").write_text(yaml.safe_dump(definition))
    return "attempt:greedy-native.scripted-greedy.html5-boilerplate.0"


def starved_build(project: Path, cluster: Cluster, give_up_s: int) -> tuple[Build, dict, str]:  # type: ignore[type-arg]
    """A build of the greedy release (wait_s=1): its stderr, and `recon status` (--json and
    text) taken as soon as the waiting line is out."""
    argv = [sys.executable, "-m", "doit", *ray_args(cluster), "release:greedy", "wait_s=1",
            f"give_up_s={give_up_s}"]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=project, env=ray_env(project, cluster),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stderr is not None and proc.stdout is not None
    lines: list[str] = []
    status: dict = {}  # type: ignore[type-arg]
    text = ""
    for found in proc.stderr:
        lines.append(found)
        if found.startswith("[recon] waiting attempt:") and not status:
            status = json.loads(recon(project, "status", "greedy", "--json").stdout)
            text = recon(project, "status", "greedy").stdout
    out = proc.stdout.read()
    proc.wait(timeout=600)
    return Build(proc.returncode, out, "".join(lines)), status, text


def test_a_cell_no_node_can_run_says_so_then_stops_the_build_which_resumes(
    cluster: Cluster, tmp_path: Path
) -> None:
    project = copy_project(tmp_path / "p")
    attempt = greedy_release(project)
    first, status, text = starved_build(project, cluster, give_up_s=30)
    err = first.stderr
    assert first.code == 75, err
    waiting = [ln for ln in err.splitlines() if ln.startswith("[recon] waiting")]
    assert len(waiting) == 1, err  # said once: the offer did not change
    assert waiting[0].startswith(
        f"[recon] waiting {attempt}: needs {{CPU: 3, memory: 1024 MiB}}; the cluster offers "
        "{CPU: 2, memory: "
    ) and waiting[0].endswith(" on 1 node(s)"), waiting[0]
    assert list(status["waiting"]) == [attempt] and status["eta_s"] is None, status
    assert status["waiting"][attempt]["needs"] == {"CPU": 3.0, "memory": 1024.0 * (1 << 20)}
    assert f"waiting for resources: {attempt}: needs {{CPU: 3" in text, text
    assert text.rstrip().endswith("eta none (waiting for resources)"), text
    stopped = [ln for ln in err.splitlines() if ln.startswith("[recon] stopped: ")]
    assert len(stopped) == 1 and stopped[0].startswith(f"[recon] stopped: {attempt}: waited "), err
    assert "(limit give_up_s) for resources no live node offers" in stopped[0], err
    assert "finished cells are kept" in err and "run the same command again to resume" in err
    assert any(ln.startswith("[ray] (autoscaler)") and "'CPU': 3" in ln
               for ln in err.splitlines()), err  # fmt: skip
    assert not (project / "releases/greedy/release.json").exists()
    assert not (project / f"store/cells/attempt/{attempt.split(':')[1]}.json").exists()
    assert first.ran, err
    again, _, _ = starved_build(project, cluster, give_up_s=2)
    assert again.code == 75, again.stderr
    assert not set(first.ran) & set(again.ran), again.stderr  # finished cells are reused
