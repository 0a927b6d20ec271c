"""recon.pipeline: a release as a DAG of content-keyed cells, driven by doit.

Names are imported on first use, so importing ``recon.pipeline.checker`` (which doit
needs on every run) does not pay for numpy, pydantic models or the cell code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.pipeline.cells import run_cell as run_cell
    from recon.pipeline.checker import blake3_checker as blake3_checker
    from recon.pipeline.keys import KIND_MODULES as KIND_MODULES
    from recon.pipeline.keys import Codes as Codes
    from recon.pipeline.keys import cell_key as cell_key
    from recon.pipeline.runtime import Cell as Cell
    from recon.pipeline.runtime import Runtime as Runtime
    from recon.pipeline.tasks import Pipeline as Pipeline

_EXPORTS = {
    "run_cell": "recon.pipeline.cells",
    "blake3_checker": "recon.pipeline.checker",
    "Codes": "recon.pipeline.keys",
    "KIND_MODULES": "recon.pipeline.keys",
    "cell_key": "recon.pipeline.keys",
    "Cell": "recon.pipeline.runtime",
    "Runtime": "recon.pipeline.runtime",
    "Pipeline": "recon.pipeline.tasks",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
