"""Fixtures of the render tests."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

Files = dict[str, bytes]


@pytest.fixture
def in_a_new_process() -> Callable[[str, Path, str], Files]:
    """``run(script, out, *args)``: run ``script`` in a fresh interpreter (its own playwright
    driver, its own chromium) with ``out`` and ``args`` as its arguments, and return the
    files it wrote into ``out``, by name."""

    def run(script: str, out: Path, *args: str) -> Files:
        out.mkdir(parents=True)
        proc = subprocess.run(
            [sys.executable, "-c", script, *args, str(out)],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        return {p.name: p.read_bytes() for p in sorted(out.iterdir())}

    return run
