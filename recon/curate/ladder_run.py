"""``recon case ladder``: each case's validity ladder graded by a real doit build.

Every variant of :func:`recon.curate.ladder.build` (faithful answer, reference, defects,
blank page, the two evidence cheats) becomes a native scripted entry whose agent copies
the variant's tree into the workspace's build output. A ladder project in
``<store>/ladder/`` holds copies of the cases, these entries and one non-formal release
per case (``ladder-<case>``, one attempt each); ``doit release:ladder-<case>`` builds it
into the project's own store. So every step is a cell like any other (workspace,
attempt, oracle, capture, probe, grade), keyed by content: a second run, or a release
that needs the same oracle, reuses them; only what changed runs again.

A case whose target region is its only content (removing it leaves the blank page) has
no ``missing`` step: that step would repeat ``blank``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from recon.curate import ladder
from recon.curate.ladder_order import Break, breaks, table
from recon.errors import ConfigError, HarnessError
from recon.project.loader import LoadedCase, Project

COPY_AGENT = """import shutil, sys
from pathlib import Path
shutil.copytree(Path(sys.argv[1]), Path(sys.argv[2]) / "site", dirs_exist_ok=True)
print("turns: 1")
print("tool_calls: 1")
"""
BUDGET = {"cpus": 1, "memory_mb": 1024, "pids": 64, "wall_s": 60, "disk_mb": 256, "output_mb": 8}
DOIT_TIMEOUT_S = 6 * 3600
PROTOCOL = {
    "repeats": 1,
    "time_limit_s": 60,
    "backend": "native",
    "formal": False,
    "retry": {"harness_failure": 2},
}


@dataclass(frozen=True)
class Result:
    case: str
    report: str
    breaks: list[Break]


@dataclass(frozen=True)
class Cells:
    """How many cells of the ladder build ran, how many the store already had, and how
    many tasks doit found up to date (not even looked up)."""

    ran: int
    reused: int
    up_to_date: int = 0


def answer_folder(project: Project, case_id: str) -> Path:
    """The case's scripted faithful answer (``entries/scripted/answers/<case>/faithful``)."""
    folder = project.entries_dir / "scripted" / "answers" / case_id / "faithful"
    if not folder.is_dir():
        raise ConfigError(
            f"{folder}: no faithful answer for case {case_id!r}; the ladder grades one "
            "between the reference and the defects: add it"
        )
    return folder


def run(project: Project, case_ids: Sequence[str], jobs: int = 2) -> tuple[list[Result], Cells]:
    """Build and grade the ladders of ``case_ids``: one :class:`Result` per case, and the
    cells that ran."""
    from recon.render import open_browser

    home = project.layout.ladder
    _reset(home, project)
    steps: dict[str, list[str]] = {}
    with open_browser(project.settings.chromium) as browser:
        for case_id in case_ids:
            case = project.cases[case_id]
            built = ladder.build(
                case.folder, case.grading, browser,
                answer=answer_folder(project, case_id), sealed=case.sealed,
            )  # fmt: skip
            alike = ladder.renders_alike(
                browser, built.trees["missing"], ladder.blank(), built.target
            )
            steps[case_id] = [s for s in ladder.LADDER if not (s == "missing" and alike)]
            _write_case(home, case, built.trees)
    cells = _doit(home, project, [f"release:{_rid(c)}" for c in case_ids], jobs)
    results = []
    for case_id in case_ids:
        grades = {v: _grade(project, case_id, v) for v in [*steps[case_id], *ladder.CHEATS]}
        found = breaks(steps[case_id], ladder.CHEATS, grades)
        results.append(Result(case_id, table(case_id, grades), found))
    return results, cells


def _rid(case_id: str) -> str:
    return f"ladder-{case_id}"


def _entry_id(case_id: str, variant: str) -> str:
    return f"ladder-{case_id}-{variant}"


def _reset(home: Path, project: Project) -> None:
    """A fresh ladder project (its doit state kept): the project's dodo.py, no cases yet."""
    for part in ("cases", "entries", "releases"):
        shutil.rmtree(home / part, ignore_errors=True)
        (home / part).mkdir(parents=True)
    shutil.copy2(project.root / "dodo.py", home / "dodo.py")
    (home / "entries" / "ladder").mkdir()
    (home / "entries" / "ladder" / "copy_tree.py").write_text(COPY_AGENT)


def _write_case(home: Path, case: LoadedCase, trees: dict[str, ladder.Tree]) -> None:
    dest = home / "cases" / case.id
    shutil.copytree(case.folder, dest, symlinks=False, ignore=shutil.ignore_patterns("sealed"))
    shutil.copytree(case.sealed, dest / "sealed")
    entries = []
    for variant, tree in trees.items():
        entry_id = _entry_id(case.id, variant)
        rel = f"ladder/trees/{entry_id}"
        for path, data in tree.items():
            target = home / "entries" / rel / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        _write_yaml(home / "entries" / f"{entry_id}.yaml", _entry(entry_id, rel, sorted(tree)))
        entries.append(entry_id)
    _write_yaml(home / "releases" / f"{_rid(case.id)}.yaml", _release(case.id, entries))


def _entry(entry_id: str, rel: str, files: list[str]) -> dict[str, Any]:
    command = ["{python}", "{entry_dir}/ladder/copy_tree.py", f"{{entry_dir}}/{rel}", "{workspace}"]
    return {
        "schema_version": 1,
        "id": entry_id,
        "model": {"provider": "none", "name": entry_id, "version": "1"},
        "agent": {
            "name": "recon-ladder",
            "version": "1",
            "command": command,
            "files": ["ladder/copy_tree.py", *(f"{rel}/{p}" for p in files)],
        },
        "reasoning_effort": "none",
        "tool_profile": "none",
        "runtime": {},
        "evidence_condition": "full",
        "sandbox": {"backend": "native"},
        "budget": BUDGET,
    }


def _release(case_id: str, entries: list[str]) -> dict[str, Any]:
    rid = _rid(case_id)
    return {
        "schema_version": 1,
        "id": rid,
        "title": f"validity ladder of {case_id} (native, non-formal)",
        "cases": [case_id],
        "entries": entries,
        "protocol": dict(PROTOCOL, name=rid),
        "aggregation": {"rule": "case-mean-v1"},
    }


def _write_yaml(path: Path, data: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def _doit(home: Path, project: Project, targets: list[str], jobs: int) -> Cells:
    """Build the ladder releases into the project's store with this recon's code."""
    import recon

    env = dict(os.environ, RECON_STORE=str(project.store_root), PYTHONDONTWRITEBYTECODE="1")
    code_root = str(Path(recon.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [code_root, env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "doit", "-n", str(jobs), "-P", "thread", *targets]
    done = subprocess.run(
        command, cwd=home, env=env, capture_output=True, text=True, timeout=DOIT_TIMEOUT_S
    )
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise HarnessError(f"the ladder build failed (doit {' '.join(targets)} in {home}):\n{tail}")
    ran = re.findall(r"^\[recon\] ran\s", done.stderr, re.MULTILINE)
    reused = re.findall(r"^\[recon\] reused\s", done.stderr, re.MULTILINE)
    fresh = re.findall(r"^-- ", done.stdout, re.MULTILINE)
    return Cells(len(ran), len(reused), len(fresh))


def _grade(project: Project, case_id: str, variant: str) -> dict[str, Any]:
    """The grade table of the variant's attempt (read through the store, verified)."""
    rid = _rid(case_id)
    name = f"{rid}.{_entry_id(case_id, variant)}.{case_id}.0.json"
    pointer = project.layout.pointer("grade", name.removesuffix(".json"))
    if not pointer.is_file():
        return {}
    outputs = json.loads(pointer.read_text(encoding="utf-8"))["outputs"]
    grade: dict[str, Any] = project.store().read_json(outputs["grade"]["digest"])
    return grade
