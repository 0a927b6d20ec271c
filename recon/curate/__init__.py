"""recon.curate: freezing a case's public material into evidence bundles and workspaces."""

from recon.curate.bundle import compose_workspace, freeze_evidence
from recon.curate.freeze import render_evidence

__all__ = ["compose_workspace", "freeze_evidence", "render_evidence"]
