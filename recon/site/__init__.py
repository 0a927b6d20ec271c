"""recon.site: the static site of a release, built from whitelisted data only.

Names are imported on first use, so ``recon --help`` (which registers ``recon site``)
does not pay for Jinja2 or numpy.
"""

from __future__ import annotations

from recon._lazy import exports

_EXPORTS = {
    "PublicCase": "recon.site.cases",
    "case_facts": "recon.site.cases",
    "build_site": "recon.site.export",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
