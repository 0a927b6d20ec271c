"""recon.project: the project on disk, loaded and cross-checked.

The layer every tool above the renderer, the grader and the sandbox reads the repository
through (DESIGN §8): the curator's commands, the release tools, the site, calibration and
the pipeline. :class:`Project` loads and cross-checks cases, entries and release
definitions (:mod:`recon.project.loader`). The matrix points of a contract are a model
(:mod:`recon.model.matrix`), which every layer speaks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.project.loader import LoadedCase as LoadedCase
    from recon.project.loader import Project as Project
    from recon.project.loader import expand_files as expand_files

_EXPORTS = {
    "LoadedCase": "recon.project.loader",
    "Project": "recon.project.loader",
    "expand_files": "recon.project.loader",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
