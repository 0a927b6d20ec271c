"""An exec's output arrives whole, however slowly the harness reads the engine's answer
(real engine, real image)."""

from __future__ import annotations

import hashlib
import http.client
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest

from recon.model import BuildStep
from recon.sandbox import ImageBuild, engine_client
from recon.sandbox.exec_stream import STDERR, STDOUT, ExecStream
from tests.sandbox.conftest import attempt

pytestmark = pytest.mark.docker


@pytest.fixture
def slow_client(monkeypatch: pytest.MonkeyPatch) -> None:
    """A harness on a busy machine: 0.2 s late reading every answer of the engine, so an
    exec's first output is already waiting behind the answer's headers."""
    begin = http.client.HTTPResponse.begin

    def late(self: http.client.HTTPResponse) -> None:
        time.sleep(0.2)
        begin(self)

    monkeypatch.setattr(http.client.HTTPResponse, "begin", late)


@pytest.fixture
def container(engine: docker.DockerClient, image: ImageBuild) -> Iterator[Any]:
    box = engine.containers.create(
        image.tag, ["sleep", "600"], init=True, network_mode="none", tmpfs={"/tmp": "size=8m"}
    )
    box.start()
    try:
        yield box
    finally:
        box.remove(force=True)


def _exec(engine: docker.DockerClient, container: Any, script: str) -> ExecStream:
    made = engine.api.exec_create(container.id, ["sh", "-c", script])
    return ExecStream(engine.api, made["Id"])


def test_output_that_arrives_with_the_answer_is_not_lost(
    engine: docker.DockerClient, container: Any, slow_client: None
) -> None:
    setup = "head -c 300000 /dev/urandom > /tmp/r; sha256sum < /tmp/r"
    digest = b"".join(_exec(engine, container, setup).chunks()).split()[0].decode()
    for _ in range(8):
        frames = list(
            _exec(engine, container, "printf 'a: b\\n'; cat /tmp/r; echo oops >&2").frames()
        )
        out = b"".join(data for stream, data in frames if stream == STDOUT)
        err = b"".join(data for stream, data in frames if stream == STDERR)
        assert out[:5] == b"a: b\n" and len(out) == 300_005
        assert hashlib.sha256(out[5:]).hexdigest() == digest
        assert err == b"oops\n"


def test_a_quiet_exec_outlasts_the_client_timeout(image: ImageBuild, container: Any) -> None:
    client = engine_client(timeout_s=2)
    made = client.api.exec_create(container.id, ["sh", "-c", "echo a; sleep 4; echo b"])
    assert b"".join(ExecStream(client.api, made["Id"]).chunks()) == b"a\nb\n"


def test_a_slow_harness_still_gets_a_valid_attempt_and_every_byte_of_its_logs(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, slow_client: None
) -> None:
    """docker-py's reader lost the first output of 2 attempts in 3 here (the log began
    mid-stream) and made one a ``harness bug: ValueError: 41 is not a valid stream``."""
    script = (
        "echo 'agent: first words'; head -c 100000 /dev/zero | tr '\\0' x; echo; "
        "mkdir -p dist; head -c 200000 /dev/urandom > dist/blob; sha256sum dist/blob"
    )
    build = BuildStep(command=["sh", "-c", "echo 'build: first words'; ls dist"], output="dist")
    for i in range(3):
        run = attempt(engine, image, tmp_path / str(i), script, build=build)
        assert run.outcome == "valid", run.reason
        assert run.output is not None
        digest = hashlib.sha256((run.output / "blob").read_bytes()).hexdigest()
        assert (
            run.logs
            == (
                f"== agent ==\nagent: first words\n{'x' * 100_000}\n{digest}  dist/blob\n"
                "\n== build ==\nbuild: first words\nblob\n"
            ).encode()
        ), run.logs[:200]
