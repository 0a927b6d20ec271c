"""Unit tests for recon.release.diff: loading sides, comparing, the table and the JSON."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import blake3
import pytest

from recon.cli import main
from recon.errors import ConfigError
from recon.model import (
    AttemptSummary,
    CaseScore,
    EntryResult,
    Manifest,
    ManifestCell,
    ManifestInputs,
    Ref,
    ReleaseResult,
    Reliability,
    ReliabilityReport,
)
from recon.project.settings import Settings
from recon.release.diff import diff, load_side
from recon.release.diff_report import render_table, to_json
from recon.release.tries import TryLine, tries_of
from recon.store import Store

# --- factories -----------------------------------------------------------------------

SETTINGS = Settings.from_env({})
"""No RECON_* variable: a diff side is found by its path or release id alone."""


def d(label: str) -> str:
    return blake3.blake3(label.encode()).hexdigest()


CASES = ("home", "shop")
ENTRIES = ("alpha", "beta")


def cells(grade_code: str = "g1") -> list[ManifestCell]:
    """evidence + attempt + grade cells per case and entry; grade keys follow the grader code."""
    out = [ManifestCell(kind="evidence", name=c, key=d(f"ev-{c}"), outputs={}) for c in CASES]
    for e in ENTRIES:
        for c in CASES:
            name = f"{e}.{c}.0"
            out.append(
                ManifestCell(
                    kind="attempt",
                    name=name,
                    key=d(f"at-{name}"),
                    outputs={"record": Ref(digest=d(f"rec-{name}"))},
                )
            )
            out.append(
                ManifestCell(
                    kind="grade",
                    name=name,
                    key=d(f"gr-{name}-{grade_code}"),
                    outputs={"table": Ref(digest=d(f"tab-{name}-{grade_code}"))},
                )
            )
    return out


def manifest(grade_code: str = "g1", **over: Any) -> Manifest:
    fields: dict[str, Any] = {
        "release": "2025q1",
        "inputs": ManifestInputs(
            cases={c: {"public": d(f"pub-{c}"), "sealed": d(f"seal-{c}")} for c in CASES},
            entries={e: d(f"entry-{e}") for e in ENTRIES},
            protocol=d("protocol"),
            code={"grade": d(grade_code), "capture": d("capture-code")},
            toolchain={"chromium": "Chromium 126.0.6478.126", "numpy": "2.4.6"},
        ),
        "cells": cells(grade_code),
        "release_json": d(f"release-{grade_code}"),
        "site": d(f"site-{grade_code}"),
    }
    return Manifest(**(fields | over))


def entry(name: str, rank: int | None, score: float | None) -> EntryResult:
    case = CaseScore(case="home", attempts={"valid": 1}, valid=1, mean=score, per_attempt=[score])
    return EntryResult(
        entry=name,
        model=f"{name}-m",
        agent=f"{name}-a",
        rank=rank,
        ranked=rank is not None,
        score=score,
        covered=2,
        cases=[case],
    )


def result(scores: Mapping[str, tuple[int | None, float | None]], **over: Any) -> ReleaseResult:
    fields: dict[str, Any] = {
        "release": "2025q1",
        "title": "Q1",
        "protocol": "std",
        "formal": True,
        "formal_note": "docker",
        "aggregation": "case-mean-v1",
        "active_cases": list(CASES),
        "entries": [entry(n, r, s) for n, (r, s) in sorted(scores.items())],
        "attempts": [],
        "reliability": ReliabilityReport(
            overall=Reliability(attempts=0, by_outcome={}, harness_failure_rate=None)
        ),
    }
    return ReleaseResult(**(fields | over))


BEFORE = {"alpha": (1, 0.70), "beta": (2, 0.60)}
AFTER = {"alpha": (2, 0.65), "beta": (1, 0.72)}


def write_side(folder: Path, m: Manifest, r: ReleaseResult) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(m.model_dump_json(indent=2))
    (folder / "release.json").write_text(r.model_dump_json(indent=2))
    return folder / "manifest.json"


# --- comparing -----------------------------------------------------------------------


def test_identical_manifests_are_identical() -> None:
    result_diff = diff(manifest(), result(BEFORE), manifest(), result(BEFORE))
    assert result_diff.identical
    assert not (result_diff.inputs or result_diff.cells or result_diff.scores)
    assert render_table(result_diff) == "recon diff 2025q1 -> 2025q1\nidentical\n"
    data = to_json(result_diff)
    assert data["identical"] is True and data["inputs"] == [] and data["scores"] == []
    assert json.loads(json.dumps(data)) == data


def test_grader_change_reports_code_digest_grade_cells_and_score_moves() -> None:
    result_diff = diff(manifest("g1"), result(BEFORE), manifest("g2"), result(AFTER))
    assert not result_diff.identical
    table = render_table(result_diff)
    headings = ("inputs", "cells", "scores", "attempts")
    sections = [line for line in table.splitlines() if line in headings]
    assert sections == list(headings)

    # inputs: only the grade code digest moved, shown short
    assert [c.path for c in result_diff.inputs] == ["code.grade"]
    assert f"code.grade  changed  {d('g1')[:12]}  ->  {d('g2')[:12]}" in table
    assert d("g1") not in table  # short digests only
    # cells: four grade cells re-keyed, attempts untouched
    assert "grade: 4 changed, 0 added, 0 removed, 0 unchanged" in table
    assert "attempt: 0 changed, 0 added, 0 removed, 4 unchanged" in table
    assert "evidence: 0 changed, 0 added, 0 removed, 2 unchanged" in table
    for name in ("alpha.home.0", "alpha.shop.0", "beta.home.0", "beta.shop.0"):
        old, new = d(f"gr-{name}-g1")[:12], d(f"gr-{name}-g2")[:12]
        assert re.search(rf"^      {re.escape(name)} +changed  {old}  ->  {new}$", table, re.M)
    # scores: both entries moved, with deltas and ranks
    assert "alpha  0.7000  ->  0.6500  -0.0500  1     ->  2" in table
    assert "beta   0.6000  ->  0.7200  +0.1200  2     ->  1" in table

    data = to_json(result_diff)
    assert data["identical"] is False
    assert data["inputs"] == [
        {"path": "code.grade", "old": d("g1"), "new": d("g2"), "change": "changed"}
    ]
    assert data["cells"]["kinds"]["grade"] == {
        "changed": 4,
        "added": 0,
        "removed": 0,
        "unchanged": 0,
    }
    assert data["cells"]["kinds"]["attempt"]["unchanged"] == 4
    changed = [c for c in data["cells"]["changes"] if c["kind"] == "grade"]
    assert len(changed) == 4 and changed[0]["outputs"]["table"][1] == d("tab-alpha.home.0-g2")
    moves = {m["entry"]: m for m in data["scores"]}
    assert moves["beta"]["old_rank"] == 2 and moves["beta"]["new_rank"] == 1
    assert moves["beta"]["delta"] == pytest.approx(0.12)
    assert {o["path"] for o in data["outputs"]} == {"release_json", "site"}
    assert json.loads(json.dumps(data)) == data


def test_added_removed_cells_entries_and_cases() -> None:
    a = manifest()
    b_inputs = a.inputs.model_copy(
        update={
            "cases": {"home": a.inputs.cases["home"], "blog": {"public": d("pub-blog")}},
            "entries": {"alpha": d("entry-alpha-v2"), "gamma": d("entry-gamma")},
            "toolchain": {"chromium": "Chromium 127.0.6533.72", "numpy": "2.4.6"},
        }
    )
    extra = ManifestCell(kind="evidence", name="blog", key=d("ev-blog"), outputs={})
    b = manifest(inputs=b_inputs, cells=[c for c in a.cells if c.name != "shop"] + [extra])
    old = result(BEFORE)
    new = result({"alpha": (1, 0.70), "gamma": (None, 0.5)})
    result_diff = diff(a, old, b, new)
    changes = {c.path: c.change for c in result_diff.inputs}
    assert changes == {
        "cases.blog.public": "added",
        "cases.shop.public": "removed",
        "cases.shop.sealed": "removed",
        "entries.alpha": "changed",
        "entries.beta": "removed",
        "entries.gamma": "added",
        "toolchain.chromium": "changed",
    }
    table = render_table(result_diff)
    assert "evidence: 0 changed, 1 added, 1 removed, 1 unchanged" in table
    assert "blog  added    (none)" in table
    assert [(m.entry, m.delta) for m in result_diff.scores] == [("beta", None), ("gamma", None)]
    assert "gamma  —       ->  0.5000  —      —     ->  —" in table


def test_duplicate_cells_in_a_manifest_are_refused() -> None:
    a = manifest()
    twice = manifest(cells=[*a.cells, a.cells[0]])
    with pytest.raises(ConfigError, match=r"cells\[evidence home\] listed twice"):
        diff(a, result(BEFORE), twice, result(BEFORE))


# --- loading -------------------------------------------------------------------------


def test_load_side_by_path_folder_and_release_id(tmp_path: Path) -> None:
    m, r = manifest(), result(BEFORE)
    path = write_side(tmp_path / "releases" / "2025q1", m, r)
    assert load_side(str(path), tmp_path, SETTINGS) == (m, r)
    assert load_side(str(path.parent), tmp_path, SETTINGS) == (m, r)
    assert load_side("2025q1", tmp_path, SETTINGS) == (m, r)


def test_load_side_missing_files_name_the_file_and_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_side("2025q9", tmp_path, SETTINGS)
    message = str(err.value)
    assert str(tmp_path / "releases" / "2025q9" / "manifest.json") in message
    assert "doit release" in message
    folder = tmp_path / "only-manifest"
    folder.mkdir()
    (folder / "manifest.json").write_text(manifest().model_dump_json())
    with pytest.raises(ConfigError, match=r"only-manifest/release\.json: file not found"):
        load_side(str(folder / "manifest.json"), tmp_path, SETTINGS)
    with pytest.raises(ConfigError, match=r"neither a manifest\.json path nor a release id"):
        load_side("Not An Id!", tmp_path, SETTINGS)


def test_load_side_malformed_files_name_the_file_and_field(tmp_path: Path) -> None:
    path = write_side(tmp_path / "r", manifest(), result(BEFORE))
    where = re.escape(str(path))
    path.write_text("{ not json")
    with pytest.raises(ConfigError, match=rf"{where}: malformed JSON: line 1.*rebuild it"):
        load_side(str(path), tmp_path, SETTINGS)
    data = json.loads(manifest().model_dump_json())
    del data["inputs"]["toolchain"]
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError, match=rf"{where}: inputs\.toolchain: field required"):
        load_side(str(path), tmp_path, SETTINGS)
    write_side(tmp_path / "r", manifest(), result(BEFORE, release="2025q2"))
    with pytest.raises(ConfigError, match="release '2025q2' does not match"):
        load_side(str(path), tmp_path, SETTINGS)


# --- attempts: values move, weights never show -----------------------------------------


def summary(ident: str, total: float | None, **values: float) -> AttemptSummary:
    return AttemptSummary.model_validate(
        {
            "id": ident,
            "entry": ident.split(".")[0],
            "case": "home",
            "index": 0,
            "outcome": "valid" if total is not None else "harness_failure",
            "reason": "",
            "formal": True,
            "total": total,
            "dimensions": {n: {"value": v, "terms": {}} for n, v in values.items()},
            "trace": {},
            "record": d(ident),
        }
    )


def test_attempt_totals_and_dimension_values_that_moved_are_listed() -> None:
    old = result(BEFORE, attempts=[
        summary("alpha.home.0", 0.7, global_visual=0.9, functional=0.5),
        summary("beta.home.0", 0.6, global_visual=0.8, functional=0.4),
        summary("gone.home.0", 0.1, functional=0.1),
    ])  # fmt: skip
    new = result(AFTER, attempts=[
        summary("alpha.home.0", 0.65, global_visual=0.8, functional=0.5),
        summary("beta.home.0", 0.6, global_visual=0.8, functional=0.4),
        summary("new.home.0", None),
    ])  # fmt: skip
    moved = diff(manifest("g1"), old, manifest("g2"), new)
    assert [m.id for m in moved.attempts] == ["alpha.home.0", "gone.home.0", "new.home.0"]
    alpha = moved.attempts[0]
    assert alpha.total == (0.7, 0.65) and alpha.dimensions == {"global_visual": (0.9, 0.8)}
    table = render_table(moved)
    assert table.split("\nattempts\n")[1].splitlines()[:2] == [
        "  alpha.home.0  total          0.7000  ->  0.6500  -0.0500",
        "                global_visual  0.9000  ->  0.8000  -0.1000",
    ]
    assert "weight" not in table and "product" not in table
    data = to_json(moved)["attempts"]
    assert data[0] == {
        "id": "alpha.home.0",
        "total": [0.7, 0.65],
        "dimensions": {"global_visual": [0.9, 0.8]},
        "outcome": None,
        "tries": None,
    }
    assert data[2]["total"] == [None, None] and data[1]["dimensions"] == {"functional": [0.1, None]}
    assert data[1]["outcome"] == ["valid", None] and data[2]["outcome"] == [None, "harness_failure"]
    assert "outcome valid -> (none)" in table


def test_a_v1_release_json_loads_without_its_arithmetic(tmp_path: Path) -> None:
    """Release JSON v1 carried ``arithmetic`` rows (whose products reveal the weights)."""
    path = write_side(tmp_path / "old", manifest(), result(BEFORE))
    v1 = json.loads((path.parent / "release.json").read_text())
    row = {"term": "functional", "value": 0.5, "product": 0.15}
    v1 |= {"schema_version": 1, "attempts": [
        json.loads(summary("alpha.home.0", 0.5).model_dump_json())
        | {"dimensions": {"functional": 0.5}, "arithmetic": [row]}
    ]}  # fmt: skip
    (path.parent / "release.json").write_text(json.dumps(v1))
    v1["reliability"] = {"attempts": 4, "by_outcome": {"valid": 3, "harness_failure": 1},
                         "harness_failure_rate": 0.25}  # fmt: skip
    for key in ("uncertainty", "withdrawals"):
        v1.pop(key)
    (path.parent / "release.json").write_text(json.dumps(v1))
    _, loaded = load_side(str(path), tmp_path, SETTINGS)
    assert loaded.schema_version == 4 and loaded.attempts[0].checks == []
    assert loaded.attempts[0].dimensions["functional"].value == 0.5
    assert "product" not in loaded.model_dump_json()
    overall = loaded.reliability.overall  # v2's one line, its rate over attempts
    assert (overall.attempts, overall.tries, overall.harness_failures) == (4, 4, 1)
    assert overall.harness_failure_rate == 0.25
    (path.parent / "release.json").write_text(json.dumps(v1 | {"schema_version": 5}))
    with pytest.raises(ConfigError, match="unsupported schema_version 5"):
        load_side(str(path), tmp_path, SETTINGS)


# --- digests long enough to differ; a retried slot's tries (issue 29) -------------------


def twin(prefix: str, tail: str) -> str:
    """A 64-hex digest starting with ``prefix``."""
    return (prefix + tail * 64)[:64]


def manifest_with(**inputs: str) -> Manifest:
    return manifest(inputs=manifest().inputs.model_copy(update=inputs))


def test_an_input_digest_is_shown_at_the_length_where_the_two_sides_differ() -> None:
    old, new = twin("3083bfaddddb07", "1"), twin("3083bfaddddb07", "2")
    table = render_table(
        diff(
            manifest_with(protocol=old), result(BEFORE), manifest_with(protocol=new), result(BEFORE)
        )
    )
    assert f"protocol  changed  {old[:15]}  ->  {new[:15]}" in table  # 14 shared: 15 shown
    far = render_table(diff(manifest("g1"), result(BEFORE), manifest("g2"), result(BEFORE)))
    assert f"code.grade  changed  {d('g1')[:12]}  ->  {d('g2')[:12]}" in far  # at least 12


RETRIED = "alpha.home.0"
LOST = "harness: worker lost: WorkerCrashedError: the worker died"


def retried_cells(record: str) -> list[ManifestCell]:
    """The same cells, the attempt's record another one under the same key."""
    return [
        c.model_copy(update={"outputs": {"record": Ref(digest=record)}})
        if (c.kind, c.name) == ("attempt", RETRIED)
        else c
        for c in cells()
    ]


def test_a_cell_whose_key_stayed_names_the_output_that_moved() -> None:
    record = twin(d(f"rec-{RETRIED}")[:13], "f")
    table = render_table(
        diff(manifest(), result(BEFORE), manifest(cells=retried_cells(record)), result(BEFORE))
    )
    line = next(x for x in table.splitlines() if x.strip().startswith(RETRIED))
    assert line.split() == [
        RETRIED, "changed", d(f"rec-{RETRIED}")[:14], "->", record[:14],
        "record", "(same", "key", f"{d(f'at-{RETRIED}')[:12]})",
    ]  # fmt: skip


def slot(tries: int, retry_of: str | None, record: str) -> AttemptSummary:
    found = summary(RETRIED, 0.7, functional=0.5)
    return found.model_copy(update={"tries": tries, "retry_of": retry_of, "record": record})


def retried_sides() -> tuple[ReleaseResult, ReleaseResult, dict[str, Any]]:
    """Release A: the slot valid in one try. Release B: its first try lost, retried, valid."""
    failed = {"outcome": "harness_failure", "reason": LOST, "try_index": 0, "retry_of": None}
    old = result(BEFORE, attempts=[slot(1, None, d("try-0"))])
    new = result(BEFORE, attempts=[slot(2, d("failed-0"), d("try-1"))])
    return old, new, failed


def test_tries_of_walks_each_slot_back_along_retry_of() -> None:
    _, new, failed = retried_sides()
    assert tries_of(new, {d("failed-0"): failed}.get)[RETRIED] == (
        TryLine(0, "harness_failure", LOST, d("failed-0"), retried=True),
        TryLine(1, "valid", "", d("try-1")),
    )
    gone = tries_of(new, lambda digest: None)[RETRIED]
    assert gone[0] == TryLine(0, None, "(its record is not in the store)", d("failed-0"), True)


def test_a_slot_whose_tries_moved_is_listed_with_each_try() -> None:
    old, new, failed = retried_sides()
    tries = (tries_of(old, lambda digest: None), tries_of(new, {d("failed-0"): failed}.get))
    moved = diff(manifest(), old, manifest(release_json=d("retried")), new, tries=tries)
    (move,) = moved.attempts
    assert (move.id, move.tries, move.outcome, move.dimensions) == (RETRIED, (1, 2), None, {})
    section = render_table(moved).split("\nattempts\n")[1].split("\n\n")[0].splitlines()
    assert [line.split() for line in section] == [
        [RETRIED, "total", "0.7000", "->", "0.7000", "+0.0000"],
        ["tries", "1", "->", "2"],
        ["before", "try", "0", "valid"],
        ["after", "try", "0", "harness_failure", "retried", *LOST.split()],
        ["after", "try", "1", "valid", "retry", "of", "try", "0"],
    ]
    data = to_json(moved)["attempts"][0]["tries"]
    assert data["count"] == [1, 2]
    assert data["a"] == [
        {"index": 0, "outcome": "valid", "reason": "", "record": d("try-0"), "retried": False}
    ]
    assert [(t["index"], t["outcome"], t["retried"]) for t in data["b"]] == [
        (0, "harness_failure", True), (1, "valid", False),
    ]  # fmt: skip
    assert data["b"][0]["reason"] == LOST and data["b"][0]["record"] == d("failed-0")


def test_recon_diff_reads_the_earlier_tries_from_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RECON_STORE", raising=False)
    old, new, failed = retried_sides()
    first = Store(tmp_path / "store").put_json(failed)
    new = new.model_copy(update={"attempts": [slot(2, first, d("try-1"))]})
    a = write_side(tmp_path / "a", manifest(), old)
    b = write_side(tmp_path / "b", manifest(release_json=d("retried")), new)
    assert main(["--root", str(tmp_path), "diff", str(a), str(b), "--json"]) == 1
    tries = json.loads(capsys.readouterr().out)["attempts"][0]["tries"]
    assert [(t["outcome"], t["reason"]) for t in tries["b"]] == [
        ("harness_failure", LOST), ("valid", ""),
    ]  # fmt: skip
    assert main(["--root", str(tmp_path), "diff", str(a), str(b)]) == 1
    assert f"after   try 0  harness_failure  retried         {LOST}" in capsys.readouterr().out
