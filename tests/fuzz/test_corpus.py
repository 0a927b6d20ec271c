"""The malformed-input corpus: every file is refused with one clean line and exit 2.

Each corpus file replaces one real file of a project copy; ``recon validate --no-render``
and ``doit list`` must both exit 2 with the same single line, ``recon: <file>: <field>:
<problem>; <fix>``, and no traceback. The files are judged one by one by
``tests/fuzz/judge.py`` in two processes (one per core); a sample is also run through the
real commands to show that the judge sees what a person would.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, copy_project, doit, doit_env, recon
from tests.fuzz.generate import CORPUS, index_bytes, mutants

INDEX: dict[str, dict[str, Any]] = json.loads((CORPUS / "index.json").read_text())
CLASSES = {
    "encoding",  # binary garbage, Latin-1, NUL bytes, UTF-16
    "yaml",  # malformed syntax, not a mapping, empty
    "duplicate-key",
    "size",  # over 1 MiB
    "alias",  # alias bomb, too many aliases, repeated values, cycles, deep nesting
    "route",
    "build-output",
    "float",  # NaN, inf, 1e308, negative weights and penalties
    "range",  # absurd budgets, time limits, counts
    "box",
    "viewport",
    "agent-files",
    "placeholder",
    "env",
    "removed-key",  # protocol.egress, sandbox.image
    "schema",
}
MAX_LINE = 1000
SAMPLE = [
    "encoding/binary-grading.yaml",
    "duplicate-key/grading-weight.yaml",
    "alias/billion-laughs.yaml",
    "size/over-1-mib-grading.yaml",
    "float/penalty-minus-50.yaml",
    "agent-files/sealed-grading.yaml",
]


def test_the_checked_in_corpus_is_what_the_generator_derives() -> None:
    found = mutants()
    on_disk = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.is_file()}
    assert on_disk == {m.path for m in found} | {"index.json"}, (
        "regenerate with `python -m tests.fuzz.generate`"
    )
    for m in found:
        assert (CORPUS / m.path).read_bytes() == m.data, m.path
    assert (CORPUS / "index.json").read_bytes() == index_bytes(found)


def test_the_corpus_covers_every_class_with_at_least_120_files() -> None:
    assert len(INDEX) >= 120
    assert {e["class"] for e in INDEX.values()} == CLASSES
    assert all(sum(e["class"] == c for e in INDEX.values()) >= 2 for c in CLASSES - {"size"})
    bomb = CORPUS / "alias/billion-laughs.yaml"
    assert bomb.stat().st_size < 400  # a few hundred bytes that expand to 387 million


def _judge(project: Path, paths: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.fuzz.judge", str(project), *paths],
        cwd=REPO,
        env=doit_env(project),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """Every corpus file judged, in two processes of half the files each."""
    paths = sorted(INDEX)
    projects = [copy_project(tmp_path_factory.mktemp("fuzz") / "project") for _ in range(2)]
    baseline = recon(projects[0], "validate", "--no-render")
    assert baseline.returncode == 0, baseline.stderr  # the unbroken copy is valid
    runs = [_judge(project, paths[i::2]) for i, project in enumerate(projects)]
    results: dict[str, dict[str, Any]] = {}
    for run in runs:
        out, err = run.communicate(timeout=1800)
        assert run.returncode == 0, err
        for line in out.splitlines():
            row = json.loads(line)
            results[row["path"]] = row
    for project in projects:  # every file was put back
        assert recon(project, "validate", "--no-render").returncode == 0
    return results


def _problems(path: str, row: dict[str, Any]) -> Iterator[str]:
    entry = INDEX[path]
    prefix = f"recon: {entry['file']}: "
    lines = {}
    for command in ("validate", "doit_list"):
        got = row[command]
        text = got["stdout"] + got["stderr"]
        if "Traceback" in text:
            yield f"{command}: traceback\n{text[-2000:]}"
        if got["code"] != 2:
            yield f"{command}: exit {got['code']}, not 2: {text[-500:]!r}"
        lines[command] = got["stderr"].rstrip("\n")
    line = lines["validate"]
    if lines["doit_list"] != line:
        yield f"doit list says {lines['doit_list']!r}, recon validate says {line!r}"
    if "\n" in line or not line.startswith(prefix) or len(line) > MAX_LINE:
        yield f"not one line naming {entry['file']} (at most {MAX_LINE} chars): {line[:300]!r}"
    missing = [name for name in entry["names"] if name not in line]
    if missing:
        yield f"does not name {missing}: {line!r}"
    if ";" not in line[len(prefix) :]:
        yield f"names no fix (`<problem>; <fix>`): {line!r}"


def test_every_malformed_file_is_one_clean_line_and_exit_2(
    judged: dict[str, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert set(judged) == set(INDEX)
    failures = [
        f"{path}: {problem}"
        for path, row in sorted(judged.items())
        for problem in _problems(path, row)
    ]
    assert not failures, f"{len(failures)} problem(s):\n" + "\n".join(failures)
    seconds = {p: r["validate"]["seconds"] + r["doit_list"]["seconds"] for p, r in judged.items()}
    slowest = sorted(seconds.items(), key=lambda kv: -kv[1])[:3]
    with capsys.disabled():  # measured, reported, never asserted (a busy machine varies)
        print(
            f"\n[fuzz] {len(seconds)} files, validate + doit list per file: median "
            f"{statistics.median(seconds.values()):.3f} s, max {max(seconds.values()):.3f} s; "
            "slowest: " + ", ".join(f"{p} {s:.3f} s" for p, s in slowest)
        )


def test_the_real_commands_print_what_the_judge_saw(
    judged: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    project = copy_project(tmp_path / "project")
    for path in SAMPLE:
        target = project / INDEX[path]["target"]
        original = target.read_bytes()
        target.write_bytes((CORPUS / path).read_bytes())
        try:
            checked = recon(project, "validate", "--no-render")
            listed = doit(project, "list", check=False)
        finally:
            target.write_bytes(original)
        want = judged[path]["validate"]["stderr"]
        assert (checked.returncode, checked.stderr) == (2, want), path
        assert (listed.code, listed.stderr) == (2, want), path
