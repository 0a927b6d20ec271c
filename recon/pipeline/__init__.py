"""recon.pipeline: a release as a DAG of content-keyed cells, driven by doit."""

from recon.pipeline.cells import Cell, Runtime, run_cell
from recon.pipeline.keys import CODE_PATHS, cell_key, code_digest
from recon.pipeline.project import LoadedCase, Project
from recon.pipeline.tasks import Pipeline

__all__ = [
    "CODE_PATHS",
    "Cell",
    "LoadedCase",
    "Pipeline",
    "Project",
    "Runtime",
    "cell_key",
    "code_digest",
    "run_cell",
]
