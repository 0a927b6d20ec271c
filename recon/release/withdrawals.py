"""A release's committed withdrawals file, ``releases/<id>.withdrawals.json``.

The aggregate cell reads its active withdrawals as an input (their digest is in its key
and in the manifest's ``inputs.withdrawals``), so a withdrawal re-aggregates the release
and nothing else, and a restore gives back the release JSON it replaced. The commands
that write it are :mod:`recon.release.withdraw`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recon.errors import ConfigError
from recon.model import Withdrawals, load_json
from recon.store import digest_json

SUFFIX = ".withdrawals.json"


def path_of(root: Path, release: str) -> Path:
    return root / "releases" / f"{release}{SUFFIX}"


def load(root: Path, release: str) -> Withdrawals:
    """The release's withdrawals file, or an empty one when there is none."""
    path = path_of(root, release)
    if not path.is_file():
        return Withdrawals(release=release)
    found = load_json(Withdrawals, path)
    if found.release != release:
        raise ConfigError(
            f"{path}: release: {found.release!r} is not {release!r}; fix the file's release id"
        )
    return found


def active_json(withdrawals: Withdrawals) -> list[dict[str, Any]]:
    """The active withdrawals as the aggregate cell reads them (sorted by attempt)."""
    ordered = sorted(withdrawals.active, key=lambda a: a.attempt)
    return [a.model_dump(mode="json") for a in ordered]


def active_digest(root: Path, release: str) -> str:
    return digest_json(active_json(load(root, release)))
