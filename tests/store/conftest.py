"""Fixtures of the store tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.store import Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    """An empty store in the test's folder."""
    return Store(tmp_path / "store")
