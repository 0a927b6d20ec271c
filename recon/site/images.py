"""The ``img/`` folder: each distinct image once, named by a keyed digest of its bytes.

Names are ``blake3`` in key-derivation mode (:data:`NAME_CONTEXT`), not the plain
content digest the store uses: an evidence still is byte-identical to the oracle's
capture of the same point, so a plain digest in a file name would print an oracle
capture digest on the site. A keyed name says nothing about any stored object.
"""

from __future__ import annotations

import blake3

from recon.errors import HarnessError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
NAME_CONTEXT = "recon site 2025 image name"
NAME_HEX = 32


def image_name(data: bytes) -> str:
    """The site path of an image: ``img/<keyed digest>.<png|webp>``."""
    digest = blake3.blake3(data, derive_key_context=NAME_CONTEXT).hexdigest()[:NAME_HEX]
    return f"img/{digest}.{_kind(data)}"


def _kind(data: bytes) -> str:
    if data.startswith(PNG_MAGIC):
        return "png"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "webp"
    return ""


class Images:
    """The images the pages show, by site path."""

    def __init__(self) -> None:
        self._files: dict[str, bytes] = {}

    def add(self, data: bytes, what: str) -> str:
        """Keep one image and return its path relative to the site root."""
        if not _kind(data):
            raise HarnessError(
                f"{what}: not a PNG or WebP image; the site publishes PNG stills and WebP "
                "motion only"
            )
        path = image_name(data)
        self._files[path] = data
        return path

    def files(self) -> dict[str, bytes]:
        return dict(self._files)
