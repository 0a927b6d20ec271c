"""Release semantics on real doit builds of the demo (issue 12): withdrawal and restore, a
metric edit explained by ``recon diff`` down to the ranks, and freezing with a re-grade."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recon.model import Sidecar, Withdrawals
from recon.store import Store
from tests.conftest import Build, clone_built, doit, recon

pytestmark = [pytest.mark.slow, pytest.mark.browser]

ATTEMPT = "demo-native.scripted-starter.todomvc.0"
DOWNSTREAM = {"aggregate", "site", "manifest", "release"}


def _release(project: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((project / "releases/demo/release.json").read_text())


def test_withdraw_then_restore_gives_the_release_json_back(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = clone_built(built_demo[0], tmp_path / "p")
    original = (project / "releases/demo/release.json").read_bytes()
    done = recon(project, "attempt", "withdraw", ATTEMPT, "--reason", "ran with a stale brief")
    assert done.returncode == 0, done.stderr
    build = doit(project, "release:demo")
    assert set(build.executed) <= DOWNSTREAM, build.stdout  # nothing upstream re-runs
    result = _release(project)
    [listed] = result["withdrawals"]
    assert listed["attempt"] == ATTEMPT and listed["applies"] and not listed["automatic"]
    assert listed["reason"] == "ran with a stale brief" and listed["recorded_outcome"] == "valid"
    assert listed["effect"] == {
        "case_valid": [2, 1],
        "entry_covered": [2, 2],
        "entry_attempts": [4, 3],
        "case_attempts": [6, 5],
        "release_attempts": [12, 11],
    }
    starter = next(e for e in result["entries"] if e["entry"] == "scripted-starter")
    todomvc = next(c for c in starter["cases"] if c["case"] == "todomvc")
    assert todomvc["attempts"] == {"valid": 1, "withdrawn": 1} and todomvc["valid"] == 1
    assert result["reliability"]["overall"]["withdrawn"] == 1

    done = recon(project, "attempt", "restore", ATTEMPT, "--reason", "the brief was current")
    assert done.returncode == 0, done.stderr
    doit(project, "release:demo")
    assert (project / "releases/demo/release.json").read_bytes() == original
    log = Withdrawals.model_validate_json((project / "releases/demo.withdrawals.json").read_text())
    assert log.active == [] and len(log.log) == 2
    store = Store(project / "store")
    withdrew, restored = (Sidecar.model_validate(store.read_json(d)) for d in log.log)
    assert (withdrew.action, restored.action) == ("withdraw", "restore")
    assert (
        restored.restores == log.log[0] and withdrew.record == restored.record == listed["record"]
    )
    assert withdrew.at and withdrew.by and restored.reason == "the brief was current"


INVERT = (
    '        value = clamp(measured, f"dimension {name}")\n',
    '        value = clamp(1.0 - measured, f"dimension {name}")\n',
)


def test_a_metric_edit_regrades_only_and_diff_explains_every_moved_score_and_rank(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = clone_built(built_demo[0], tmp_path / "p")
    composer = project / "recon/grade/compose.py"
    text = composer.read_text()
    assert INVERT[0] in text
    composer.write_text(text.replace(*INVERT))  # every dimension inverted: the ranks flip
    build = doit(project, "release:demo")
    assert set(build.executed) == {"grade"} | DOWNSTREAM, build.stdout
    assert build.executed["grade"] == 12 and build.executed["aggregate"] == 1
    for kind in ("evidence", "workspace", "image", "attempt", "oracle", "capture", "probe"):
        assert build.ran_kinds()[kind] == 0, build.stderr
    before = built_demo[0] / "releases/demo"
    diff = recon(project, "diff", str(before), "demo")
    assert diff.returncode == 1, diff.stderr
    data = json.loads(recon(project, "diff", str(before), "demo", "--json").stdout)
    assert [i["path"] for i in data["inputs"]] == ["code.grade"]
    moved = {m["entry"]: m for m in data["scores"]}
    assert set(moved) == {"scripted-faithful", "scripted-starter"}
    assert (moved["scripted-faithful"]["old_rank"], moved["scripted-faithful"]["new_rank"]) == (
        1,
        2,
    )
    assert (moved["scripted-starter"]["old_rank"], moved["scripted-starter"]["new_rank"]) == (2, 1)
    chains = {c["entry"]: c for c in data["chains"]}
    assert set(chains) == set(moved)
    for chain in chains.values():
        assert [c["path"] for c in chain["causes"]] == ["code.grade"]
        assert chain["cells"] == {"grade": 4, "aggregate": 1}  # its own grades, then the rank
        assert {m["case"] for m in chain["cases"]} == {"html5-boilerplate", "todomvc"}
        assert chain["text"] in diff.stdout
        assert chain["text"].startswith("code.grade changed → 4 grade, 1 aggregate cells → ")
    assert chains["scripted-starter"]["text"].endswith(
        "→ rank 2 → 1 (order flipped with scripted-faithful)"
    )
    cases = {(m["entry"], m["case"]) for m in data["cases"]}
    assert cases == {(e, c) for e in moved for c in ("html5-boilerplate", "todomvc")}
    assert len([a for a in data["attempts"] if a["total"][0] is not None]) == 8


def test_a_frozen_release_refuses_a_changed_case_until_regraded(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = clone_built(built_demo[0], tmp_path / "p")
    frozen = recon(project, "release", "freeze", "demo")
    assert frozen.returncode == 0, frozen.stderr
    lock = json.loads((project / "releases/demo.lock").read_text())
    assert lock["version"] == 1 and lock["inputs"]["cases.todomvc.public"]
    nothing = doit(project, "release:demo")
    assert sum(nothing.executed.values()) == 0  # unchanged inputs build as before

    grading = project / "cases/html5-boilerplate/sealed/grading.yaml"
    text = grading.read_text()
    calibrated = text.replace("  global_visual: 0.35\n", "  global_visual: 0.3\n").replace(
        "  policy: 0.1\n", "  policy: 0.15\n"
    )
    assert calibrated != text
    grading.write_text(calibrated)
    refused = doit(project, "release:demo", check=False)
    assert refused.code == 2, refused.stdout + refused.stderr
    message = [line for line in refused.stderr.splitlines() if line.startswith("recon: ")]
    assert len(message) == 1 and "case html5-boilerplate (calibration, grading)" in message[0]
    assert "cut a new release id" in message[0] and "regrade=demo" in message[0]
    assert refused.ran == []  # refused before any cell

    regraded = doit(project, "release:demo", "regrade=demo")
    assert regraded.ran_kinds()["attempt"] == 0 and regraded.ran_kinds()["grade"] > 0
    assert "re-graded release:demo: manifest version 1 -> 2" in regraded.stderr
    lock = json.loads((project / "releases/demo.lock").read_text())
    assert lock["version"] == 2 and [v["version"] for v in lock["history"]] == [1, 2]
    assert lock["history"][1]["changed"] == [
        "cases.html5-boilerplate.calibration",
        "cases.html5-boilerplate.grading",
    ]
    diff = recon(project, "diff", "demo@1", "demo")
    assert diff.returncode == 1, diff.stderr
    assert diff.stdout.startswith("recon diff demo -> demo  (manifest version 1 -> 2)\n")
    assert "cases.html5-boilerplate.calibration  changed" in diff.stdout
    assert "cases.html5-boilerplate.calibration changed → " in diff.stdout  # the chain
    again = doit(project, "release:demo")
    assert sum(again.executed.values()) == 0, again.stdout  # version 2 is the frozen one now
