"""recon.grade: pure metrics, one module per dimension, and their composition.

Names are imported on first use, so a module that needs one metric helper (the site's
difference heatmap reads ``recon.grade._ssim``) depends on that module only, in the code
graph as at run time.
"""

from __future__ import annotations

from recon._lazy import exports

_EXPORTS = {
    "Composed": "recon.grade.compose",
    "compose": "recon.grade.compose",
    "mean": "recon.grade.compose",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
