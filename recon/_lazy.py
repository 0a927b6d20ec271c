"""Lazy re-exports: a package names its public surface without importing it.

A package ``__init__`` declares ``_EXPORTS = {"Name": "recon.pkg.module"}`` and sets
``__getattr__ = exports(__name__, _EXPORTS)``. The code graph (recon.pipeline.codegraph)
reads the same table, so ``from recon.pkg import Name`` depends on that module only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def exports(package: str, table: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``table[name]`` on first use."""

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(table[name]), name)

    return __getattr__
