"""recon.pipeline: a release as a DAG of content-keyed cells, driven by doit.

Names are imported on first use, so importing ``recon.pipeline.checker`` (which doit
needs on every run) does not pay for numpy, pydantic models or the cell code.
"""

from __future__ import annotations

from recon._lazy import exports

_EXPORTS = {
    "KIND_MODULES": "recon.pipeline.keys",
    "Codes": "recon.pipeline.keys",
    "cell_key": "recon.pipeline.keys",
    "Cell": "recon.pipeline.cells",
    "Runtime": "recon.pipeline.cells",
    "run_cell": "recon.pipeline.cells",
    "Pipeline": "recon.pipeline.tasks",
    "blake3_checker": "recon.pipeline.checker",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
