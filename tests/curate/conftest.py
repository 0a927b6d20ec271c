"""Shared fixtures of the curator tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.cli import main


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project in tmp_path holding one scaffolded case, ``my-page`` (no evidence)."""
    (tmp_path / "cases").mkdir()
    assert main(["--root", str(tmp_path), "case", "new", "my-page", "--no-evidence"]) == 0
    return tmp_path
