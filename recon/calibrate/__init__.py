"""recon.calibrate: blind pairwise preferences calibrate the dimension weights (issue 15).

``collect`` (pairs, page) -> a rater's export -> ``ingest`` -> preference rows -> ``fit``
(rows, scores, measure, fit, agreement, raters) -> ``releases/calibrations/<id>.yaml``.
See ``recon/calibrate/CARD.md`` for what the fit does and does not do. Names are imported
on first use, so ``recon --help`` does not load numpy.
"""

from __future__ import annotations

from recon._lazy import exports

_EXPORTS = {
    "Agreed": "recon.calibrate.agreement",
    "agreement": "recon.calibrate.agreement",
    "Fitted": "recon.calibrate.fit",
    "fit": "recon.calibrate.fit",
    "calibrate": "recon.calibrate.measure",
    "Chosen": "recon.calibrate.pairs",
    "choose": "recon.calibrate.pairs",
    "Rated": "recon.calibrate.raters",
    "rate": "recon.calibrate.raters",
    "Shot": "recon.calibrate.scores",
    "by_digest": "recon.calibrate.scores",
    "shots": "recon.calibrate.scores",
}

__all__ = sorted(_EXPORTS)

__getattr__ = exports(__name__, _EXPORTS)
