"""recon.project: the project on disk, loaded and cross-checked, and the matrix of a contract.

The layer every tool above the renderer, the grader and the sandbox reads the repository
through (DESIGN §8): the curator's commands, the release tools, the site, calibration and
the pipeline. :class:`Project` loads and cross-checks cases, entries and release
definitions (:mod:`recon.project.loader`); :func:`points` names the route × viewport ×
state points of a contract (:mod:`recon.project.matrix`).

Names are imported on first use, so a cell kind that needs a matrix point depends on
:mod:`recon.project.matrix` only, not on the loader (recon.pipeline.codegraph).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.project.loader import LoadedCase as LoadedCase
    from recon.project.loader import Project as Project
    from recon.project.loader import expand_files as expand_files
    from recon.project.matrix import Point as Point
    from recon.project.matrix import points as points

_EXPORTS = {
    "LoadedCase": "recon.project.loader",
    "Project": "recon.project.loader",
    "expand_files": "recon.project.loader",
    "Point": "recon.project.matrix",
    "points": "recon.project.matrix",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
