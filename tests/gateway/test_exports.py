"""The package's public names resolve, and importing the pure core does not load aiohttp."""

from __future__ import annotations

import subprocess
import sys

import recon.gateway
from tests.conftest import REPO


def test_every_export_resolves() -> None:
    for name in recon.gateway.__all__:
        assert getattr(recon.gateway, name) is not None, name


def test_the_pure_core_does_not_import_aiohttp() -> None:
    code = (
        "import sys, recon.gateway.usage, recon.gateway.meter, recon.gateway.attempt;"
        "print('aiohttp' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(REPO)},
    )
    assert out.stdout.strip() == "False", out.stderr
