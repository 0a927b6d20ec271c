"""recon.curate: freezing a case's public material into evidence bundles and workspaces,
and rendering its evidence.

Names are imported on first use: the evidence and workspace cells import
``recon.curate.bundle``, and their code (recon.pipeline.codegraph) must not include the
renderer that ``render_evidence`` drives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.curate.bundle import compose_workspace as compose_workspace
    from recon.curate.bundle import freeze_evidence as freeze_evidence
    from recon.curate.freeze import render_evidence as render_evidence

_EXPORTS = {
    "compose_workspace": "recon.curate.bundle",
    "freeze_evidence": "recon.curate.bundle",
    "render_evidence": "recon.curate.freeze",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
