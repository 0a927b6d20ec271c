"""recon.site: the static site of a release, built from whitelisted data only.

Names are imported on first use, so ``recon --help`` (which registers ``recon site``)
does not pay for Jinja2 or numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.site.cases import PublicCase as PublicCase
    from recon.site.cases import case_facts as case_facts
    from recon.site.export import build_site as build_site

_EXPORTS = {
    "PublicCase": "recon.site.cases",
    "case_facts": "recon.site.cases",
    "build_site": "recon.site.export",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
