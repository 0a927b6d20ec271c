"""A lost Ray node (issue 29, item 3), on a real multi-node cluster in a network namespace
of the tests' own (:mod:`tests.pipeline.netcluster`): worker nodes of 1 CPU each, the
doit build inside the namespace too, one node lost by SIGKILL to its raylet's pid.

- a node lost mid-capture, another node offering ``browser``: exit 0, the capture lost
  once and resubmitted, release.json and manifest.json byte-identical to a local build;
- a node lost mid-attempt: one harness-failure try, one retry, no score moved;
- the only node offering ``browser`` lost mid-capture: the waiting line (wait_s=1); a node
  that joins later lets the build finish, byte-identical to the local build;
- the same capture lost three times (LOST_LIMIT is 2): the build fails with one clear
  line, and no release is published.

Each build is of one release of one case, one slow native attempt (6 s, long enough to be
found running). Its store starts with the local build's cells that do not depend on the
attempt (evidence, workspace, image, oracles, the reference's and starter's probe and
capture), so the cluster runs the attempt, its capture, probe and grade, and the release's
aggregate, site and manifest: everything a lost node can touch.
"""

from __future__ import annotations

import json
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from recon.errors import ConfigError
from recon.pipeline.raycluster import answers
from recon.store import Store
from tests.conftest import Build, copy_project, doit, free_port
from tests.pipeline.netcluster import (
    NetCluster,
    Running,
    kill_running,
    net_cluster,
    netns_unavailable,
)
from tests.pipeline.test_ray import slow_release

pytestmark = [pytest.mark.slow, pytest.mark.browser]

SLOT = "slow-native.scripted-slow.html5-boilerplate.0"


@pytest.fixture(scope="module")
def cluster() -> Iterator[NetCluster]:
    why = netns_unavailable()
    if why is not None:
        pytest.skip(f"no network namespace for a multi-node Ray cluster here: {why}")
    with net_cluster() as found:
        yield found


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The slow release built in-process: what every cluster build must equal."""
    project = copy_project(tmp_path_factory.mktemp("local") / "p")
    assert slow_release(project) == SLOT
    doit(project, "-n", "2", "-P", "thread", "release:slow")
    return project


def seeded(local: Path, dest: Path) -> Path:
    """A project whose store holds the local build's cells that do not depend on the slot
    (see the module docstring)."""
    project = copy_project(dest)
    slow_release(project)
    shutil.copytree(local / "store", project / "store", dirs_exist_ok=True)
    later = ("aggregate", "site", "manifest")
    for path in (project / "store/actions").glob("*/*.json"):
        found = json.loads(path.read_text())
        if found["kind"] in later or SLOT in found["name"]:
            path.unlink()
    for path in (project / "store/cells").glob("*/*.json"):
        if path.parent.name in later or SLOT in path.name:
            path.unlink()
    return project


def lost_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("[recon] lost")]


def same_as_local(project: Path, local: Path) -> None:
    for name in ("release.json", "manifest.json"):
        mine = (project / "releases/slow" / name).read_bytes()
        assert mine == (local / "releases/slow" / name).read_bytes(), name


def losses_said(err: str) -> str:
    """What the final summary says of the build's lost workers."""
    said = [ln for ln in err.splitlines() if ln.startswith("workers lost under cells: ")]
    assert len(said) == 1, err
    return said[0].removeprefix("workers lost under cells: ")


def losses(project: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((project / "releases/slow/runs.json").read_text())["losses"]


def lost_once(cluster: NetCluster, local: Path, tmp_path: Path, kind: str) -> tuple[Path, Build]:
    """A build on two nodes offering ``browser``, the one running the slot's ``kind`` cell
    lost: it exits 0, having said one loss, of that cell, resubmitted."""
    cluster.keep(browsers=2)
    project = seeded(local, tmp_path / "p")
    run = Running(cluster, project, "release:slow")
    kill_running(cluster, run, f"{kind}:{SLOT}")
    build = run.end()
    assert build.code == 0, build.stderr
    lost = lost_lines(build.stderr)
    assert len(lost) == 1 and f"{kind}:{SLOT}" in lost[0] and "retried now" in lost[0], lost
    return project, build


def test_a_node_lost_mid_capture_is_absorbed_byte_identical(
    cluster: NetCluster, local: Path, tmp_path: Path
) -> None:
    project, build = lost_once(cluster, local, tmp_path, "capture")
    assert "finished, ok; executor ray" in build.stderr
    same_as_local(project, local)
    assert losses(project) == {"capture": {"lost": 1, "resubmitted": 1}}


def test_a_node_lost_mid_attempt_is_one_harness_failure_one_retry_no_score_moved(
    cluster: NetCluster, local: Path, tmp_path: Path
) -> None:
    project, _ = lost_once(cluster, local, tmp_path, "attempt")
    store = Store(project / "store")
    pointer = json.loads((project / f"store/cells/attempt/{SLOT}.json").read_text())
    record = store.read_json(pointer["outputs"]["record"]["digest"])
    assert (record["outcome"], record["try_index"]) == ("valid", 1)
    failed = store.read_json(record["retry_of"])
    assert (failed["outcome"], failed["try_index"]) == ("harness_failure", 0)
    assert failed["reason"].startswith("harness: worker lost: "), failed["reason"]
    mine = json.loads((project / "releases/slow/release.json").read_text())
    theirs = json.loads((local / "releases/slow/release.json").read_text())
    overall = mine["reliability"]["overall"]
    assert (overall["tries"], overall["retries"], overall["harness_failures"]) == (2, 1, 1)
    assert theirs["reliability"]["overall"]["tries"] == 1
    slot, local_slot = mine["attempts"][0], theirs["attempts"][0]
    assert (slot["tries"], slot["retry_of"]) == (2, record["retry_of"])
    assert (local_slot["tries"], local_slot["retry_of"]) == (1, None)
    for found in (mine, theirs):  # what a retry changes: the tries, not a score
        found.pop("reliability")
        for key in ("record", "retry_of", "tries"):
            found["attempts"][0].pop(key)
    assert mine == theirs
    assert losses(project) == {"attempt": {"lost": 1, "resubmitted": 1}}


def test_the_only_browser_node_lost_waits_then_a_joining_node_finishes_it(
    cluster: NetCluster, local: Path, tmp_path: Path
) -> None:
    cluster.keep(browsers=1, plain=1)
    project = seeded(local, tmp_path / "p")
    run = Running(cluster, project, "release:slow", "wait_s=1", "give_up_s=600")
    kill_running(cluster, run, f"capture:{SLOT}")
    waiting = run.line(f"[recon] waiting capture:{SLOT}: ")
    needs, offers = waiting.split("; the cluster offers ", 1)
    assert needs.endswith(": needs {CPU: 1, browser: 1}"), waiting
    assert "CPU: 1" in offers and "browser" not in offers, waiting  # the plain node's CPU
    assert offers.endswith(" on 2 node(s)\n"), waiting  # the head and the plain node
    cluster.add_nodes(1, cpus=1, browser=1)
    build = run.end()
    assert build.code == 0, build.stderr
    same_as_local(project, local)
    assert losses(project)["capture"] == {"lost": 1, "resubmitted": 1}


def test_a_capture_lost_more_times_than_allowed_fails_the_build_unpublished(
    cluster: NetCluster, local: Path, tmp_path: Path
) -> None:
    cluster.keep(browsers=3)
    project = seeded(local, tmp_path / "p")
    run = Running(cluster, project, "release:slow")
    for _ in range(3):
        kill_running(cluster, run, f"capture:{SLOT}")
    build = run.end()
    assert build.code != 0, build.stderr
    lost = [ln for ln in lost_lines(build.stderr) if f"capture:{SLOT}" in ln]
    assert len(lost) == 3 and all("worker lost: NodeDiedError" in ln for ln in lost), lost
    assert [ln.endswith("; retried now") for ln in lost] == [True, True, False], lost
    assert lost[-1].endswith(
        "; failed: lost 3 times, and a cell is submitted again at most 2 times; the build "
        "fails, finished cells are kept, and the same command resumes it"
    ), lost[-1]
    assert build.code == 1 and "Traceback" not in build.stderr, build.stderr
    assert not (project / "releases/slow/release.json").exists()
    assert not (project / "releases/slow/manifest.json").exists()
    assert losses_said(build.stderr) == "lost 3 (resubmitted 2): capture 3 (resubmitted 2)"


def test_an_address_no_cluster_answers_on_is_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        answers(f"127.0.0.1:{sock.getsockname()[1]}")  # something answers: Ray's to judge
    answers("auto")
    port = free_port()
    with pytest.raises(ConfigError, match=rf"address=127.0.0.1:{port}: no Ray cluster answers"):
        answers(f"127.0.0.1:{port}")


def test_a_build_on_an_address_no_cluster_answers_on_is_one_line_exit_2(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    slow_release(project)
    address = f"127.0.0.1:{free_port()}"
    build = doit(project, "-n", "2", "-P", "thread", "release:slow", "executor=ray",
                 f"address={address}", check=False)  # fmt: skip
    assert build.code == 2, build.stderr
    said = [ln for ln in build.stderr.splitlines() if f"address={address}" in ln]
    assert len(said) == 1 and said[0].startswith("[recon] stopped: "), build.stderr
    assert f"address={address}: no Ray cluster answers there (connection refused); " in said[0]
    assert "Traceback" not in build.stderr + build.stdout
