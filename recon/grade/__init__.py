"""recon.grade: pure metrics, one module per dimension, and their composition.

Names are imported on first use, so a module that needs one metric helper (the site's
difference heatmap asks for ``ssim_map``, of ``recon.grade._ssim``) depends on that module
only, in the code graph as at run time. The region selector engine, shared by the grader,
``recon validate`` and the validity ladder, is the public module ``recon.grade.selectors``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.grade._dom import Box as Box
    from recon.grade._dom import box_of as box_of
    from recon.grade._ssim import mean_ssim as mean_ssim
    from recon.grade._ssim import ssim_map as ssim_map
    from recon.grade.compose import Composed as Composed
    from recon.grade.compose import mean as mean

_EXPORTS = {
    "Box": "recon.grade._dom",
    "box_of": "recon.grade._dom",
    "mean_ssim": "recon.grade._ssim",
    "ssim_map": "recon.grade._ssim",
    "Composed": "recon.grade.compose",
    "mean": "recon.grade.compose",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
