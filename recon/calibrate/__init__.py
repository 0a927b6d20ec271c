"""recon.calibrate: blind pairwise preferences calibrate the dimension weights (issue 15).

``collect`` (pairs, page) -> a rater's export -> ``ingest`` -> preference rows -> ``fit``
(rows, scores, measure, fit, agreement, raters) -> ``releases/calibrations/<id>.yaml``.
See ``recon/calibrate/CARD.md`` for what the fit does and does not do. Names are imported
on first use, so ``recon --help`` does not load numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.calibrate.agreement import Agreed as Agreed
    from recon.calibrate.fit import Fitted as Fitted
    from recon.calibrate.measure import calibrate as calibrate
    from recon.calibrate.pairs import Chosen as Chosen
    from recon.calibrate.pairs import choose as choose
    from recon.calibrate.raters import Rated as Rated
    from recon.calibrate.raters import rate as rate
    from recon.calibrate.scores import Shot as Shot
    from recon.calibrate.scores import by_digest as by_digest
    from recon.calibrate.scores import shots as shots

_EXPORTS = {
    "Agreed": "recon.calibrate.agreement",
    "Fitted": "recon.calibrate.fit",
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
