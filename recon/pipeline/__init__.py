"""recon.pipeline: a release as a DAG of content-keyed cells, driven by doit.

Names are imported on first use, so importing ``recon.pipeline.checker`` (which doit
needs on every run) does not pay for numpy, pydantic models or the cell code.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CODE_PATHS": "recon.pipeline.keys",
    "cell_key": "recon.pipeline.keys",
    "code_digest": "recon.pipeline.keys",
    "Cell": "recon.pipeline.cells",
    "Runtime": "recon.pipeline.cells",
    "run_cell": "recon.pipeline.cells",
    "LoadedCase": "recon.pipeline.project",
    "Project": "recon.pipeline.project",
    "Pipeline": "recon.pipeline.tasks",
    "blake3_checker": "recon.pipeline.checker",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'recon.pipeline' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
