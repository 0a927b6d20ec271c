"""The static site of a release: pure bytes out of the release JSON and whitelisted images.

The exporter sits outside the sealed evaluation boundary (DESIGN §5.3). It sees only
what its arguments carry: the public ``ReleaseResult`` (scores, each dimension's value and
allow-listed public terms, digests, counts), the public evidence screenshots of each case,
and the Candidate captures of each attempt. Oracle references, selectors, thresholds,
sealed weights and weight × value products are never arguments (``AttemptSummary`` cannot
hold one), so they cannot reach a page.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from recon.errors import HarnessError
from recon.model.result import AttemptSummary, ReleaseResult
from recon.site._html import STYLE
from recon.site._index import index_page
from recon.site._run import run_page
from recon.store.canonical import digest_bytes

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class Images:
    """The ``img/`` folder: content-addressed PNGs, one file per distinct image."""

    def __init__(self) -> None:
        self._files: dict[str, bytes] = {}

    def add(self, data: bytes, what: str) -> str:
        """Keep one PNG and return its path relative to the site root."""
        if not data.startswith(PNG_MAGIC):
            raise HarnessError(f"{what}: not a PNG image; the site publishes PNG screenshots only")
        path = f"img/{digest_bytes(data)}.png"
        self._files[path] = data
        return path

    def files(self) -> dict[str, bytes]:
        return dict(self._files)


def _check_ids(attempts: list[AttemptSummary]) -> None:
    seen: dict[str, str] = {}
    for attempt in attempts:
        if not SAFE_ID.match(attempt.id):
            raise HarnessError(
                f"release JSON: attempt id {attempt.id!r} cannot name a page; "
                "ids use letters, digits, '.', '_' and '-' only"
            )
        folded = attempt.id.lower()
        if folded in seen:
            raise HarnessError(
                f"release JSON: attempt ids {seen[folded]!r} and {attempt.id!r} collide; "
                "every attempt needs its own id (case-insensitively)"
            )
        seen[folded] = attempt.id


def build_site(
    result: ReleaseResult,
    evidence: Mapping[str, Mapping[str, bytes]],
    captures: Mapping[str, Mapping[str, bytes]],
) -> dict[str, bytes]:
    """Every file of the site, relative path -> bytes; identical inputs give identical bytes.

    ``evidence`` maps case id -> evidence file name (``desktop.png``) -> PNG bytes; only
    ``*.png`` names are published. ``captures`` maps attempt id -> matrix point id
    (``root.desktop.default``) -> full-page PNG of the Candidate's render. Images are
    written only when a run page shows them, so evidence of cases without attempts and
    captures of unknown attempts are left out.
    """
    _check_ids(result.attempts)
    images = Images()
    files: dict[str, bytes] = {
        "index.html": index_page(result),
        "style.css": STYLE.encode("utf-8"),
    }
    for attempt in sorted(result.attempts, key=lambda a: a.id):
        files[f"runs/{attempt.id}.html"] = run_page(
            result,
            attempt,
            evidence.get(attempt.case, {}),
            captures.get(attempt.id, {}),
            images.add,
        )
    files.update(images.files())
    return dict(sorted(files.items()))
