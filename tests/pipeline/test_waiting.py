"""Waiting for resources (issue 29): what a starved cell's watch says and when, without Ray;
the settings; the progress snapshot and its views while a cell waits; the exit code."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.errors import EXIT_NO_RESOURCES, ConfigError, ResourcesUnavailable
from recon.model import BuildProgress, WaitingCell
from recon.pipeline.executor import ExecutorChoice
from recon.pipeline.progress import Tracker, snapshot_path
from recon.pipeline.runtime import Cell
from recon.pipeline.view import CellFailed, line, rich_table, summary
from recon.pipeline.waiting import Limits, Watch, demand, fits, live_offers, shown
from recon.project.settings import Settings
from tests.conftest import copy_project, doit

CELL = "capture:p.e.c.0"
NEEDS = {"CPU": 1.0, "browser": 1.0}
BARE = {"CPU": 2.0, "memory": 4096.0 * (1 << 20), "node:127.0.0.1": 1.0}
FULL = {**BARE, "browser": 2.0}


def test_demand_is_what_the_task_asks_by_rays_names() -> None:
    assert demand({"num_cpus": 1, "resources": {"browser": 1}}) == NEEDS
    assert demand({"num_cpus": 2, "memory": 1 << 30}) == {"CPU": 2.0, "memory": 1 << 30}
    assert demand({}) == {"CPU": 1.0}


def test_a_cell_fits_one_live_node_never_the_sum_of_two() -> None:
    nodes = [{"Alive": True, "Resources": {"CPU": 1.0}}, {"Alive": True, "Resources": {"CPU": 1.0}},
             {"Alive": False, "Resources": {"CPU": 8.0}}]  # fmt: skip
    offers = live_offers(nodes)
    assert offers == [{"CPU": 1.0}, {"CPU": 1.0}]
    assert not any(fits({"CPU": 2.0}, o) for o in offers)
    assert fits(NEEDS, FULL) and not fits(NEEDS, BARE)
    assert shown({"CPU": 2.0, "memory": 1024.0 * (1 << 20)}) == "{CPU: 2, memory: 1024 MiB}"


def test_the_waiting_line_comes_once_after_wait_s_and_again_when_the_offer_changes() -> None:
    watch = Watch(CELL, NEEDS, Limits(wait_s=60, give_up_s=1800))
    assert watch.observe(1000.0, [FULL]) == watch.observe(1001.0, [FULL])  # fits: nothing
    assert watch.observe(1010.0, [BARE]).line is None  # starved from 1010
    assert watch.observe(1069.0, [BARE]).line is None  # 59 s
    said = watch.observe(1070.0, [BARE])
    assert said.line == (
        f"[recon] waiting {CELL}: needs {{CPU: 1, browser: 1}}; the cluster offers "
        "{CPU: 2, memory: 4096 MiB} on 1 node(s)"
    )
    assert said.changed and said.state is not None and said.state.since == 1010.0
    assert watch.observe(1100.0, [BARE]).line is None  # said once
    again = watch.observe(1101.0, [BARE, BARE])  # a node joined, still no browser
    assert again.line is not None and again.line.endswith("{CPU: 4, memory: 8192 MiB} on 2 node(s)")
    back = watch.observe(1102.0, [BARE, FULL])  # a node with a browser: no longer waiting
    assert back.changed and back.state is None and back.line is None and back.give_up is None
    assert watch.observe(1103.0, [BARE]).line is None  # starved again: the clock starts over


def test_the_cell_gives_up_after_give_up_s_starved_or_when_another_did() -> None:
    watch = Watch(CELL, NEEDS, Limits(wait_s=60, give_up_s=1800))
    watch.observe(0.0, [BARE])
    assert watch.observe(1799.0, [BARE]).give_up is None
    stop = watch.observe(1800.0, [BARE]).give_up
    assert stop is not None and "waited 1800 s (limit give_up_s)" in stop
    assert "finished cells are kept" in stop and "run the same command again" in stop
    assert "--resources='{\"browser\": 1}'" in stop and "exit 75" in stop
    other = Watch(CELL, NEEDS, Limits(wait_s=60, give_up_s=1800))
    assert other.observe(5.0, [FULL], stopping=True).give_up is None  # it can run: it does
    stopped = other.observe(6.0, [BARE], stopping=True).give_up
    assert stopped is not None and "another cell gave up" in stopped


@pytest.mark.parametrize(
    ("wait", "give_up", "message"),
    [("soon", None, "wait_s=soon: not a number of seconds"),
     ("-1", None, "wait_s=-1: not a number of seconds"),
     (None, "nan", "give_up_s=nan: not a number of seconds"),
     ("120", "60", "give_up_s=60: must be at least wait_s (120)")],
)  # fmt: skip
def test_bad_limits_are_one_clear_error(
    wait: str | None, give_up: str | None, message: str
) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ExecutorChoice.from_vars("ray", None, wait, give_up)


def test_limits_come_from_doit_variables_else_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert ExecutorChoice.from_vars("ray", None).limits == Limits(60.0, 1800.0)
    monkeypatch.setenv("RECON_RAY_WAIT_S", "5")
    monkeypatch.setenv("RECON_RAY_GIVE_UP_S", "30")
    settings = Settings.from_env()
    assert ExecutorChoice.from_vars("ray", None, settings=settings).limits == Limits(5.0, 30.0)
    found = ExecutorChoice.from_vars("ray", None, "1", "2", settings=settings)
    assert found.limits == Limits(1.0, 2.0)


def test_a_waiting_cell_is_in_the_snapshot_with_no_eta(tmp_path: Path) -> None:
    cells = [Cell("attempt", "a0", {"entry": "e"}), Cell("capture", "a0"), Cell("capture", "a1")]
    tracker = Tracker(tmp_path, "ray")
    tracker.track("r", cells)
    tracker.started(cells[0])
    tracker.finished(cells[0], "ran", 4.0, None)
    tracker.started(cells[1])
    assert tracker.builds[0].snapshot().eta_s is not None
    state = WaitingCell(needs=NEEDS, offers={"CPU": 2.0}, nodes=1, since=12.0)
    tracker.waiting(cells[1], state)
    saved = BuildProgress.model_validate_json(snapshot_path(tmp_path, "r").read_text())
    assert saved.waiting == {"capture:a0": state} and saved.eta_s is None
    assert "  waiting for resources 1  " in line(saved)
    assert line(saved).endswith("eta none (waiting for resources)")
    row = "waiting for resources: capture:a0: needs {CPU: 1, browser: 1}; the cluster offers " \
          "{CPU: 2} on 1 node(s)"  # fmt: skip
    assert row in summary(saved) and summary(saved)[-1].endswith("eta none (waiting for resources)")
    assert row in rich_table(saved).caption
    tracker.waiting(cells[1], None)
    assert tracker.builds[0].snapshot().waiting == {}
    tracker.waiting(cells[1], state)
    tracker.failed(cells[1])  # a cell that gave up is no longer waiting
    assert tracker.builds[0].snapshot().waiting == {}


def test_a_cell_that_gave_up_carries_its_exit_code_to_doit() -> None:
    failed = CellFailed.of(CELL, ResourcesUnavailable("waited"))
    assert failed.exit_code == EXIT_NO_RESOURCES == 75 and failed.message == f"{CELL}: waited"


def test_a_bad_limit_on_the_doit_command_line_is_one_line_and_exit_2(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    found = doit(project, "release:demo", "executor=ray", "wait_s=soon", check=False)
    assert found.code == 2, found.stdout + found.stderr
    assert found.stderr.strip().splitlines() == [
        "recon: wait_s=soon: not a number of seconds between 0 and 604800 (e.g. `wait_s=60`)"
    ]


def test_rays_own_lines_are_passed_on_plain() -> None:
    from recon.pipeline.raycluster import ray_line

    coloured = (
        "\x1b[33mError: No available node types can fulfill resource request {'CPU': 3.0}\x1b[0m"
    )
    assert ray_line("autoscaler", coloured) == (
        "[ray] (autoscaler) Error: No available node types can fulfill resource request "
        "{'CPU': 3.0}\n"
    )
    assert ray_line("raylet", "  ") == ""
