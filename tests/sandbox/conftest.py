"""Shared fixtures of the sandbox tests: the real engine, the real image, one attempt."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from recon.errors import HarnessError
from recon.model import Budget, BuildStep
from recon.project.settings import Settings
from recon.sandbox import (
    DockerRun,
    ImageBuild,
    ImageRecipe,
    build_image,
    engine_client,
    ensure_engine,
    run_docker,
)
from recon.sandbox.rootfs import host_arch
from tests.conftest import deps_root

CREATED: list[str] = []  # attempt containers of this session (other sessions may share the engine)
BUDGET = Budget(cpus=1, memory_mb=256, pids=64, wall_s=60, disk_mb=64, output_mb=1)
NO_BUILD = BuildStep(command=[], output="dist")
MB = 1024 * 1024


@pytest.fixture(scope="session")
def engine() -> docker.DockerClient:
    try:
        ensure_engine(state_dir=Settings.from_env().engine_state)
    except HarnessError as err:
        pytest.skip(f"no docker engine can start here: {err}")
    return engine_client()


@pytest.fixture(scope="session")
def image(engine: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory) -> ImageBuild:
    """Built once per session (minutes, cold); a cache hit when the tag already exists."""
    settings = Settings.from_env()
    return build_image(ImageRecipe(arch=host_arch()), tmp_path_factory.mktemp("image"), engine,
                       deps_root=deps_root(), cache_dir=settings.apt_cache)  # fmt: skip


def attempt(
    engine: docker.DockerClient,
    image: ImageBuild,
    tmp_path: Path,
    script: str,
    *,
    budget: Budget = BUDGET,
    time_limit_s: int = 30,
    build: BuildStep = NO_BUILD,
    **kwargs: Any,
) -> DockerRun:
    workspace = tmp_path / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    (workspace / "brief.md").write_text("rebuild the page\n")
    out = tmp_path / f"out-{len(list(tmp_path.glob('out-*')))}"
    run = run_docker(
        workspace, ["bash", "-c", script], budget, time_limit_s, image.tag,
        build=build, out=out, client=engine, **kwargs,
    )  # fmt: skip
    if run.container_id:
        CREATED.append(run.container_id)
    return run


@pytest.fixture
def healthy(engine: docker.DockerClient, image: ImageBuild, tmp_path: Path) -> Iterator[None]:
    """After every adversarial attempt: the engine answers, a trivial attempt is valid, and
    no attempt container is left behind."""
    yield
    assert engine.ping()
    run = attempt(engine, image, tmp_path / "after", "mkdir dist && echo ok > dist/index.html")
    assert run.outcome == "valid", run.reason
    for container_id in CREATED:
        with pytest.raises(docker.errors.NotFound):
            engine.containers.get(container_id)


def client_hello(server_name: str | None) -> bytes:
    """The first flight of a real TLS client (Python's ssl), naming ``server_name``."""
    context = ssl.create_default_context()
    if server_name is None:
        context.check_hostname = False
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname=server_name)
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()
