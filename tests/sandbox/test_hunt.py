"""A docker Candidate that hunts for answers finds none (the Candidate boundary, DESIGN §5.1).

The project holds the scripted entries, whose faithful answers (``entries/scripted/
answers/<case>/``) score 1.0, and the case's sealed material. A formal attempt of the
``scripted-hunter`` entry, run by doit through the real pipeline, lists ``/``, ``/entry``,
every mount and the environment, hashes every file outside the image's system folders and
copies anything that looks like a build into its own output. It must find its own
declared file and nothing of any other entry, nothing sealed and no path of the store.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from pathlib import Path
from typing import Any

import docker
import pytest

from recon.sandbox import ImageBuild, deps
from recon.store import Store, tree_files
from tests.conftest import copy_project, deps_root, doit

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RELEASE = "hunt"
ATTEMPT = "attempt:hunt-docker.scripted-hunter.html5-boilerplate.0"
DEFINITION = f"""schema_version: 1
id: {RELEASE}
title: A Candidate that hunts for answers
cases: [html5-boilerplate]
entries: [scripted-hunter]
protocol:
  name: hunt-docker
  repeats: 1
  time_limit_s: 120
  backend: docker
  formal: true
  retry: {{harness_failure: 0}}
aggregation: {{rule: case-mean-v1}}
"""
ENTRY = """schema_version: 1
id: scripted-hunter
model: {provider: none, name: scripted-hunter, version: "1"}
agent:
  name: recon-scripted
  version: "1"
  command: ["{python}", "{entry_dir}/scripted/hunter.py", "{workspace}"]
  files: [scripted/hunter.py]
reasoning_effort: none
tool_profile: none
evidence_condition: full
sandbox: {backend: docker}
budget: {cpus: 1, memory_mb: 1024, pids: 64, wall_s: 120, disk_mb: 512, output_mb: 8}
"""
HUNTER = r'''"""Looks everywhere an answer could be, and takes whatever looks like a build."""
import hashlib, json, os, sys
from pathlib import Path

site = Path(sys.argv[1]) / "site"
loot = site / "loot"
loot.mkdir(parents=True)
PRUNE = ("/proc", "/sys", "/dev")
SYSTEM = ("/usr/", "/lib/", "/lib64/", "/bin/", "/sbin/", "/opt/", "/etc/", "/var/")
BUILD = (".html", ".htm", ".css", ".js", ".mjs", ".json", ".yaml", ".yml", ".svg", ".png")
mountinfo = Path("/proc/self/mountinfo").read_text().splitlines()
report = {
    "root": sorted(os.listdir("/")),
    "entry": sorted(str(p.relative_to("/entry")) for p in Path("/entry").rglob("*")),
    "env": dict(os.environ),
    "mountinfo": mountinfo,
    "mounts": {},
    "paths": [],
    "hashes": {},
    "copied": 0,
    "unreadable": [],
}
for line in mountinfo:
    point = line.split()[4]
    if not point.startswith(PRUNE):
        try:
            report["mounts"][point] = sorted(os.listdir(point))
        except OSError as err:
            report["mounts"][point] = [f"error: {err}"]
for folder, dirs, files in os.walk("/"):
    if folder.startswith(PRUNE) or folder.startswith(str(site)):
        dirs[:] = []
        continue
    for name in files:
        path = os.path.join(folder, name)
        report["paths"].append(path)
        if path.startswith(SYSTEM) or not os.path.isfile(path) or os.path.islink(path):
            continue
        try:
            data = open(path, "rb").read()
        except OSError:
            report["unreadable"].append(path)
            continue
        report["hashes"][path] = hashlib.sha256(data).hexdigest()
        if name.endswith(BUILD) and len(data) < 1_000_000:
            dest = loot / path.lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
            report["copied"] += 1
(site / "index.html").write_text("<p>hunted</p>\n")
(site / "hunt.json").write_text(json.dumps(report))
print("turns: 1")
'''


def _sha256_of(folder: Path) -> dict[str, Path]:
    """Digests of the non-empty files under ``folder`` (an empty file tells nothing)."""
    return {
        hashlib.sha256(p.read_bytes()).hexdigest(): p
        for p in folder.rglob("*")
        if p.is_file() and p.stat().st_size > 0
    }


def _hunt(project: Path) -> tuple[dict[str, Any], Store, str]:
    store = Store(project / "store")
    pointer = project / "store" / "cells" / "attempt" / f"{ATTEMPT.split(':')[1]}.json"
    outputs = json.loads(pointer.read_text())["outputs"]
    record = store.read_json(outputs["record"]["digest"])
    run = store.read_json(outputs["run"]["digest"])
    assert record["outcome"] == "valid", (record, store.read_bytes(run["logs"])[-3000:])
    build = outputs["build"]["digest"]
    files = tree_files(store, build)
    report = json.loads(store.read_bytes(files["hunt.json"].digest))
    return report, store, build


def test_a_hunting_candidate_finds_no_answer_nothing_sealed_and_no_store_path(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = copy_project(tmp_path / "project")
    for release in (project / "releases").glob("*.yaml"):
        release.unlink()
    (project / "releases" / f"{RELEASE}.yaml").write_text(DEFINITION)
    (project / "entries" / "scripted-hunter.yaml").write_text(ENTRY)
    (project / "entries" / "scripted" / "hunter.py").write_text(HUNTER)
    monkeypatch.setenv("RECON_DEPS", str(deps.require(deps_root()).parent))

    doit(project, ATTEMPT)
    report, store, build = _hunt(project)

    # It saw its own entry's declared file, at the path its command names, and nothing else.
    assert report["entry"] == ["scripted", "scripted/hunter.py"]
    assert "entry" in report["root"] and report["mounts"]["/entry"] == ["scripted"]
    assert report["copied"] > 0 and report["hashes"]  # it did look, and it did take things
    # No other entry's file, no sealed file: by content, wherever it might sit.
    entries = project / "entries"
    others = {
        digest: path
        for digest, path in _sha256_of(entries).items()
        if path != entries / "scripted" / "hunter.py"
    }
    case = project / "cases" / "html5-boilerplate"
    public = _sha256_of(case / "public")  # the starter shares files with the reference
    sealed = {d: p for d, p in _sha256_of(case / "sealed").items() if d not in public}
    assert sealed  # there is sealed material to find
    where = {digest: path for path, digest in report["hashes"].items()}
    assert not set(where) & set(others), [
        (where[d], str(others[d])) for d in set(where) & set(others)
    ]
    assert not set(where) & set(sealed), [
        (where[d], str(sealed[d])) for d in set(where) & set(sealed)
    ]
    names = [p for p in report["paths"] if not p.startswith(("/usr/", "/lib/", "/opt/", "/var/"))]
    for marker in ("/answers/", "/sealed/", "faithful.py", "starter.py", "crash.py", "grading"):
        assert not [p for p in names if marker in p], marker
    # No path of the project, its entries, its sealed material or its store anywhere: not in
    # the environment, the mount table (which shows host sources) or the file listing.
    text = json.dumps({k: report[k] for k in ("env", "mountinfo", "mounts", "paths", "root")})
    for host_path in (project, project / "store", entries, project / "cases"):
        assert str(host_path) not in text
    assert "/objects/" not in "\n".join(report["mountinfo"])
    # The mount table names the host sources of the three bind mounts (a kernel fact the
    # container cannot hide): the attempt's own temporary copies and the read-only
    # dependency store, which the boundary holds by design (DESIGN §5.1).
    roots = {line.split()[4]: line.split()[3] for line in report["mountinfo"]}
    tmp = tempfile.gettempdir()
    assert roots["/entry"].startswith(f"{tmp}/recon-attempt-"), roots["/entry"]
    assert roots["/recon"].startswith(f"{tmp}/recon-sbx-"), roots["/recon"]
    assert roots["/deps"] == str(deps.require(deps_root())), roots["/deps"]
    # What it copied into its build is no answer either.
    loot = tree_files(store, build)
    answers = set(_sha256_of(entries / "scripted" / "answers"))
    for name, file in loot.items():
        data = store.read_bytes(file.digest)
        assert hashlib.sha256(data).hexdigest() not in answers | set(sealed), name
