"""The release manifest: every input and output digest of a release, in canonical order."""

from __future__ import annotations

from collections.abc import Iterable

from recon.model import Manifest, ManifestCell, ManifestInputs


def build_manifest(
    release: str,
    inputs: ManifestInputs,
    cells: Iterable[ManifestCell],
    release_json: str,
    site: str,
    version: int = 1,
) -> Manifest:
    ordered = sorted(cells, key=lambda c: (c.kind, c.name))
    return Manifest(
        release=release,
        version=version,
        inputs=inputs,
        cells=ordered,
        release_json=release_json,
        site=site,
    )
