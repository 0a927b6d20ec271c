"""recon.grade: pure metrics, one module per dimension, and their composition.

Names are imported on first use, so a module that needs one metric helper (the site's
difference heatmap asks for ``ssim_map``, of ``recon.grade._ssim``) depends on that module
only, in the code graph as at run time. The region selector engine, shared by the grader,
``recon validate`` and the validity ladder, is the public module ``recon.grade.selectors``.
"""

from __future__ import annotations

from recon._lazy import exports

_EXPORTS = {
    "Composed": "recon.grade.compose",
    "compose": "recon.grade.compose",
    "mean": "recon.grade.compose",
    "Box": "recon.grade._dom",
    "box_of": "recon.grade._dom",
    "mean_ssim": "recon.grade._ssim",
    "ssim_map": "recon.grade._ssim",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
