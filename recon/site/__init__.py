"""recon.site: the static site of a release, built from whitelisted data only."""

from recon.site.export import build_site

__all__ = ["build_site"]
