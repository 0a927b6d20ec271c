"""The docker backend takes in a hostile build output by the same rule as the native one
(``outputs.py``): every trick of ``tricks.py`` becomes an attempt with its reason."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from recon.sandbox import ImageBuild
from tests.sandbox.conftest import BUDGET, attempt
from tests.sandbox.tricks import TRICKS, Trick, agent, capped, check_attempt

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("trick", TRICKS, ids=lambda t: t.name)
def test_every_trick_is_an_attempt_with_its_reason(
    engine: docker.DockerClient, image: ImageBuild, tmp_path: Path, trick: Trick
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "agent.py").write_text(agent(trick, "dist"))
    run = attempt(
        engine, image, tmp_path, "python3 agent.py /sandbox/work",
        budget=capped(BUDGET), file_cap_mb=1,
    )  # fmt: skip
    check_attempt(run, trick, "dist")
