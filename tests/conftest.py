"""Shared fixtures: real doit builds of real project copies in temporary folders."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import socket
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from playwright.sync_api import Browser

from recon.project.settings import Settings
from recon.render.browser import open_browser

REPO = Path(__file__).resolve().parent.parent
PROJECT_PARTS = ("dodo.py", "recon", "cases", "entries")
FULL_SUITE = "RECON_FULL_SUITE"


def deps_root() -> Path:
    """The offline dependency stores the tests use: ``RECON_DEPS``, else this checkout's
    ``store/deps``."""
    return Settings.from_env().deps_root(REPO / "store")


def suite_cases() -> list[str]:
    """The case ids a test parametrised over cases runs on: the demo release's cases (what
    CI has time for), or every case under cases/ when RECON_FULL_SUITE=1."""
    if os.environ.get(FULL_SUITE) == "1":
        return sorted(p.parent.name for p in (REPO / "cases").glob("*/case.yaml"))
    demo = yaml.safe_load((REPO / "releases" / "demo.yaml").read_text(encoding="utf-8"))
    return [str(case) for case in demo["cases"]]


def copy_project(dest: Path) -> Path:
    """A fresh project: code, cases, entries, release definitions and the calibrations they
    name; no store, no outputs."""
    dest.mkdir(parents=True)
    for part in PROJECT_PARTS:
        src = REPO / part
        if src.is_dir():
            shutil.copytree(src, dest / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / part)
    (dest / "releases").mkdir()
    for release in (REPO / "releases").glob("*.yaml"):
        shutil.copy2(release, dest / "releases" / release.name)
    shutil.copytree(REPO / "releases" / "calibrations", dest / "releases" / "calibrations")
    return dest


@dataclass
class Build:
    code: int
    stdout: str
    stderr: str

    @property
    def executed(self) -> Counter[str]:
        """doit tasks that executed (not up to date), counted by kind."""
        names = re.findall(r"^\.  (\S+)$", self.stdout, re.MULTILINE)
        return Counter(name.split(":")[0] for name in names)

    @property
    def ran(self) -> list[str]:
        """Cells whose work actually ran (not reused from the action cache)."""
        return re.findall(r"^\[recon\] ran\s+(\S+)", self.stderr, re.MULTILINE)

    @property
    def reused(self) -> list[str]:
        return re.findall(r"^\[recon\] reused\s+(\S+)", self.stderr, re.MULTILINE)

    def ran_kinds(self) -> Counter[str]:
        return Counter(c.split(":")[0] for c in self.ran)


def naming(text: str, calibration: str) -> str:
    """A release definition's text naming ``calibration`` (in place of the one it names)."""
    kept = [line for line in text.splitlines() if not line.startswith("calibration:")]
    return "\n".join([*kept, f"calibration: {calibration}"]) + "\n"


def doit_env(project: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("RECON_STORE", None)
    env.pop("RECON_SEALED", None)
    # Project copies start with an empty store; they share the offline dependency store
    # `make deps` fetched into this repository's (tests never fetch from a registry).
    env.setdefault("RECON_DEPS", str(REPO / "store" / "deps"))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def doit(project: Path, *args: str, check: bool = True) -> Build:
    proc = subprocess.run(
        [sys.executable, "-m", "doit", *args],
        cwd=project,
        env=doit_env(project),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    build = Build(proc.returncode, proc.stdout, proc.stderr)
    if check and proc.returncode != 0:
        raise AssertionError(
            f"doit {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
        )
    return build


def recon(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "recon", "--root", str(project), *args],
        cwd=project,
        env=doit_env(project),
        capture_output=True,
        text=True,
        timeout=600,
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules of the docker tier run last, each kept whole (its module fixtures built
    once), in their collected order: `make test` builds the sandbox image in the background
    meanwhile, and the first docker test waits on its lock instead of building it."""
    docker = {item.path for item in items if item.get_closest_marker("docker")}
    items.sort(key=lambda item: item.path in docker)


@pytest.fixture(scope="session")
def built_demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    """The demo release built cold, once per session, with two worker threads (one browser
    each), as `doit -n 2 -P thread` would. Tests copy it before changing it."""
    project = copy_project(tmp_path_factory.mktemp("demo") / "project")
    return project, doit(project, "-n", "2", "-P", "thread", "release:demo")


def clone_built(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


@pytest.fixture
def unshare_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PATH starts with an ``unshare`` that fails as the kernel refuses it on a machine
    that permits no network namespace (not root, no unprivileged user namespaces)."""
    folder = tmp_path / "unshare-refused"
    folder.mkdir()
    tool = folder / "unshare"
    tool.write_text(
        "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n"
    )
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return tool


TINY = """schema_version: 1
id: tiny
title: One case, one entry, one attempt
cases: [html5-boilerplate]
entries: [scripted-faithful]
protocol:
  name: tiny-native
  repeats: 1
  time_limit_s: 60
  backend: native
  formal: false
  retry: {harness_failure: 2}
aggregation: {rule: case-mean-v1}
"""


def tiny_project(dest: Path) -> Path:
    """A fresh project with ``releases/tiny.yaml``: the cheapest whole release (one case,
    one entry, one attempt; about 16 cells, a store of about 1 MB)."""
    project = copy_project(dest)
    (project / "releases" / "tiny.yaml").write_text(TINY)
    return project


@pytest.fixture(scope="session")
def built_tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny release (:func:`tiny_project`) built cold, once per session. Tests read it
    or copy it (:func:`clone_built`) before changing it."""
    project = tiny_project(tmp_path_factory.mktemp("tiny") / "project")
    doit(project, "release:tiny")
    return project


def published(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (a published release), relative path -> bytes."""
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def bench_module(name: str) -> ModuleType:
    """``bench/<name>.py`` loaded as a module (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One chromium for a module's tests (each capture opens a fresh context). A module whose
    tests launch browsers of their own runs them before the first test that asks for this
    one: playwright's sync API refuses a second browser on a thread that holds one."""
    with open_browser() as opened:
        yield opened


def reader(files: Mapping[str, str | bytes]) -> Callable[[str], bytes | None]:
    """A build-output reader over ``files`` (text is UTF-8 encoded); None for other paths."""

    def read(path: str) -> bytes | None:
        body = files.get(path)
        return body.encode() if isinstance(body, str) else body

    return read


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listened on a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
