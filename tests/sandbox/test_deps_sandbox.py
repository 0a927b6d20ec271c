"""npm and pip inside a formal attempt install from the read-only offline store only."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from recon.model import Budget, BuildStep
from recon.sandbox import DockerRun, ImageBuild, deps, run_docker
from tests.conftest import deps_root

BUDGET = Budget(cpus=1, memory_mb=1024, pids=256, wall_s=180, disk_mb=256, output_mb=2)

APP = {
    "index.html": '<!doctype html><div id="root"></div><script type="module" src="/main.jsx">'
    "</script>\n",
    "main.jsx": "import React from 'react';\nimport { createRoot } from 'react-dom/client';\n"
    "import 'bootstrap/dist/css/bootstrap.min.css';\n"
    "createRoot(document.getElementById('root')).render("
    '<h1 className="display-1">offline</h1>);\n',
}


def _run(
    client: docker.DockerClient,
    built: ImageBuild,
    tmp_path: Path,
    script: str,
    build: BuildStep,
    files: dict[str, str] | None = None,
) -> DockerRun:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    for name, text in (files or {}).items():
        (workspace / name).write_text(text)
    return run_docker(
        workspace, ["bash", "-c", script], BUDGET, 180, built.tag,
        build=build, out=tmp_path / "out", client=client, deps=deps.require(deps_root()),
    )  # fmt: skip


@pytest.mark.docker
def test_npm_installs_react_vite_bootstrap_offline_and_the_build_step_runs_vite(
    engine: docker.DockerClient,
    image: ImageBuild,
    tmp_path: Path,
) -> None:
    script = (
        "set -e; npm init -y >/dev/null; npm install react react-dom vite bootstrap; "
        "ls node_modules/.bin/vite; python3 -c 'import os; print(os.listdir(\"/deps\"))'"
    )
    build = BuildStep(command=["npx", "vite", "build", "--outDir", "dist"], output="dist")
    run = _run(engine, image, tmp_path, script, build, APP)
    assert run.outcome == "valid", (run.reason, run.logs[-3000:])
    assert run.output is not None
    built = sorted(str(p.relative_to(run.output)) for p in run.output.rglob("*") if p.is_file())
    assert "index.html" in built
    assert any(p.startswith("assets/") and p.endswith(".js") for p in built)
    assert any(p.startswith("assets/") and p.endswith(".css") for p in built)
    css = next(p for p in run.output.rglob("*.css")).read_text()
    assert "Bootstrap" in css  # bootstrap's css, bundled by vite from the offline store
    assert run.egress["allowed"] == run.egress["refused"] == 0  # nothing left the container
    assert b"added " in run.logs and b"vite v5.4.11 building for production" in run.logs


@pytest.mark.docker
def test_a_package_not_in_the_store_is_a_quick_clear_install_error(
    engine: docker.DockerClient,
    image: ImageBuild,
    tmp_path: Path,
) -> None:
    script = (
        "npm install left-pad-nonexistent; echo npm=$?; "
        "pip install somethingmissing; echo pip=$?; "
        "pip install --user tenacity==9.1.4 && "
        "python3 -c 'import tenacity; print(\"tenacity ok\")'; "
        "touch /deps/x 2>&1 | head -1"
    )
    run = _run(engine, image, tmp_path, script, BuildStep(command=[], output="dist"))
    logs = run.logs.decode(errors="replace")
    assert run.outcome == "ungradeable", (run.outcome, run.reason)  # not a timeout: no hang
    assert "404 Not Found - GET http://127.0.0.1:4873/left-pad-nonexistent" in logs, logs
    assert "npm=1" in logs
    assert "No matching distribution found for somethingmissing" in logs
    assert "pip=1" in logs
    assert "tenacity ok" in logs  # the store's wheels do install
    assert "Read-only file system" in logs
