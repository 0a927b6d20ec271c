"""Sandbox image recipes. The native backend's "image" is a description of the host."""

from __future__ import annotations

import platform
import sys
from typing import Any


def native_recipe() -> dict[str, Any]:
    """What a native attempt ran on; part of every native attempt's key."""
    return {
        "backend": "native",
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "machine": platform.machine(),
        "system": platform.system(),
    }
