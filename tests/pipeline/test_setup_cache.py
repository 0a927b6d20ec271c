"""The no-op plan cached under a stat key (issue 16): a value derived at task setup is used
only while every file and folder it came from, and its facts, are unchanged; a damaged
cache file is ignored, never trusted; a no-op through it still re-keys what an edit moves."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recon.pipeline.setupcache import Scan, SetupCache, tree_paths
from recon.store.statcache import RACY_NS
from tests.conftest import Build, clone_built, doit, doit_env


def _settle() -> None:
    time.sleep(RACY_NS / 1e9 + 0.2)


def _tree(root: Path) -> Path:
    (root / "cases" / "a" / "public").mkdir(parents=True)
    (root / "cases" / "a" / "case.yaml").write_text("id: a\n")
    (root / "cases" / "a" / "public" / "brief.md").write_text("brief\n")
    return root / "cases"


def _saved(tmp_path: Path, facts: dict[str, str]) -> tuple[SetupCache, Path]:
    cases = _tree(tmp_path)
    cache = SetupCache(tmp_path / "setup.json", facts)
    assert not cache.save(Scan.take(facts, tree_paths(cases)), {"v": 1})  # just written: racy
    assert not cache.path.exists()
    _settle()
    assert cache.save(Scan.take(facts, tree_paths(cases)), {"v": 1})
    assert cache.load() == {"v": 1}
    return cache, cases


def test_a_cached_value_is_dropped_when_a_file_a_folder_or_a_fact_moves(tmp_path: Path) -> None:
    cache, cases = _saved(tmp_path, {"python": "3.11"})
    assert SetupCache(cache.path, {"python": "3.12"}).load() is None
    (cases / "a" / "public" / "brief.md").write_text("brief, edited\n")
    assert cache.load() is None
    _settle()
    assert cache.save(Scan.take(cache.facts, tree_paths(cases)), {"v": 2})
    assert cache.load() == {"v": 2}
    (cases / "a" / "public" / "new.png").write_bytes(b"\x89PNG")  # a file no list named yet
    assert cache.load() is None
    _settle()
    assert cache.save(Scan.take(cache.facts, tree_paths(cases)), {"v": 3})
    (cases / "a" / "public" / "new.png").unlink()
    assert cache.load() is None


def test_a_value_derived_while_a_file_moved_is_not_used(tmp_path: Path) -> None:
    cache, cases = _saved(tmp_path, {"python": "3.11"})
    scan = Scan.take(cache.facts, tree_paths(cases))  # the stat pass, before deriving
    (cases / "a" / "case.yaml").write_text("id: a\nversion: 2\n")  # edited meanwhile
    cache.save(scan, {"v": "from the old case.yaml"})
    assert cache.load() is None


@pytest.mark.parametrize("damage", ["garbage", "truncated", "value", "digest", "schema"])
def test_a_damaged_cache_file_is_ignored_not_trusted(tmp_path: Path, damage: str) -> None:
    cache, _ = _saved(tmp_path, {"python": "3.11"})
    data = cache.path.read_bytes()
    record = json.loads(data)
    if damage == "garbage":
        cache.path.write_bytes(b"\x00\xff not json")
    elif damage == "truncated":
        cache.path.write_bytes(data[: len(data) // 2])
    elif damage == "value":  # parses, names the same files: the check catches it
        record["value"] = {"v": 99}
        cache.path.write_text(json.dumps(record))
    elif damage == "digest":
        record["digest"] = "0" * 64
        cache.path.write_text(json.dumps(record))
    else:
        record["schema"] = 99
        cache.path.write_text(json.dumps(record))
    assert cache.load() is None


WHICH = (
    "import sys; from pathlib import Path; sys.argv = ['doit', 'release:demo']; "
    "from recon.pipeline.noop import open_pipeline; "
    "from recon.project.settings import Settings; "
    "print(type(open_pipeline(Path.cwd(), Settings.from_env())).__name__)"
)


def _opens(project: Path) -> str:
    """Which pipeline dodo.py would get in ``project`` (its own copy of recon)."""
    proc = subprocess.run([sys.executable, "-c", WHICH], cwd=project, env=doit_env(project),
                          capture_output=True, text=True, timeout=600, check=True)  # fmt: skip
    return proc.stdout.strip()


@pytest.mark.slow
@pytest.mark.browser
def test_a_no_op_uses_the_plan_until_a_case_an_entry_a_release_or_code_moves(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = clone_built(built_demo[0], tmp_path / "p")
    plan = project / "store/state/setup/noop.json"
    _settle()
    doit(project, "release:demo")  # a copy: new inodes; checks every task, stamps, caches
    assert plan.is_file() and _opens(project) == "NoopPipeline"
    fast = doit(project, "release:demo")
    assert sum(fast.executed.values()) == 0 and fast.stdout.count("-- ") == 1, fast.stdout
    status = json.loads((project / "store/state/progress/demo.json").read_text())
    assert all(k["uptodate"] == k["total"] for k in status["kinds"].values())
    assert "capture:demo-native.scripted-starter.todomvc.1" in doit(project, "list", "--all").stdout

    edits = {  # a comment: the same definition, a new stat key (and for code, a new digest)
        "case": project / "cases/todomvc/case.yaml",
        "entry": project / "entries/scripted-faithful.yaml",
        "release": project / "releases/demo.yaml",
        "code": project / "recon/pipeline/kinds/site.py",
    }
    for what, path in edits.items():
        _settle()
        path.write_text(path.read_text() + f"\n# {what} edited\n")
        assert _opens(project) == "Pipeline", what
        slow = doit(project, "release:demo")
        assert slow.stdout.count("-- ") > 60, (what, slow.stdout)  # tasks were checked again
        # the site kind's code digest moved: its cell ran; a comment in a definition
        # re-keys no attempt, render, probe or grade (the manifest records every digest)
        assert set(slow.ran) <= {"site:demo", "manifest:demo"}, (what, slow.stderr)
        assert ("site:demo" in slow.ran) == (what == "code"), (what, slow.stderr)
        _settle()
        doit(project, "release:demo")  # settles the rewritten pointers; stamps again
        assert _opens(project) == "NoopPipeline", what
    (project / "cases/todomvc/public/extra.txt").write_text("a new public file\n")
    assert _opens(project) == "Pipeline"  # its folder moved: no list had to name it
