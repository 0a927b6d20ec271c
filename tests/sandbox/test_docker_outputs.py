"""The docker backend takes in a hostile build output by the same rule as the native one
(``outputs.py``): every trick of ``tricks.py`` becomes an attempt with its reason."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from recon.sandbox import ImageBuild
from tests.sandbox.conftest import BUDGET, attempt
from tests.sandbox.tricks import INDEX, TRICKS, Trick, agent, capped, names_first

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
    if not trick.refusals:
        assert run.outcome == "valid", (run.reason, run.refusals)
        assert run.output is not None and run.refusals == []
        found = sorted(str(p.relative_to(run.output)) for p in run.output.rglob("*") if p.is_file())
        assert found == list(trick.files)
        assert not [p for p in run.output.rglob("*") if p.is_symlink()]
        assert (run.output / "index.html").read_text() == INDEX
        return
    expected = trick.expected("dist")
    assert (run.outcome, run.output, run.refusals) == ("ungradeable", None, expected), run.reason
    assert names_first(run.reason, expected[0])
