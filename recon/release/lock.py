"""Frozen releases: ``releases/<id>.lock`` (:class:`~recon.model.ReleaseLock`).

``recon release freeze <id>`` records the manifest of the built release and every input
digest it was built from. A later build whose inputs differ is refused, naming what
changed, unless the release is re-graded on purpose (``doit release:<id> regrade=<id>``):
that build writes manifest version ``n + 1`` and appends it to the lock's history, and
``recon diff <id>@<n> <id>`` shows what moved.
"""

from __future__ import annotations

import json
from pathlib import Path

from recon.errors import ConfigError
from recon.model import LockVersion, Manifest, ReleaseLock, load_json
from recon.store import write_atomic

SUFFIX = ".lock"


def path_of(root: Path, release: str) -> Path:
    return root / "releases" / f"{release}{SUFFIX}"


def load(root: Path, release: str) -> ReleaseLock | None:
    """The release's lock, or None when it is not frozen."""
    path = path_of(root, release)
    if not path.exists():
        return None
    try:
        lock = load_json(ReleaseLock, path)
    except ConfigError as err:
        raise ConfigError(
            f"{err}; restore it from version control, or delete it and run "
            f"`recon release freeze {release}` again"
        ) from None
    if lock.release != release:
        raise ConfigError(f"{path}: release: {lock.release!r} is not {release!r}; fix the id")
    return lock


def changed(lock: ReleaseLock, inputs: dict[str, str]) -> list[str]:
    """The input paths whose digest differs from the lock's (added and removed too)."""
    return sorted(
        k for k in lock.inputs.keys() | inputs.keys() if lock.inputs.get(k) != inputs.get(k)
    )


def describe(paths: list[str]) -> str:
    """``case todomvc (grading, checks, calibration); code.grade``: what a person reads."""
    by_case: dict[str, list[str]] = {}
    other: list[str] = []
    for path in paths:
        parts = path.split(".")
        if parts[0] == "cases" and len(parts) == 3:
            by_case.setdefault(parts[1], []).append(parts[2])
        else:
            other.append(path)
    named = [f"case {case} ({', '.join(parts)})" for case, parts in sorted(by_case.items())]
    return "; ".join(named + other)


def refusal(release: str, lock: ReleaseLock, paths: list[str]) -> str:
    return (
        f"release {release} is frozen (releases/{release}{SUFFIX}, "
        f"manifest version {lock.version}) and its inputs changed: {describe(paths)}; "
        f"cut a new release id for the changed inputs, or re-grade on purpose with "
        f"`doit release:{release} regrade={release}`"
    )


def frozen(release: str, manifest_digest: str, manifest: Manifest) -> ReleaseLock:
    entry = LockVersion(
        version=manifest.version, manifest=manifest_digest, release_json=manifest.release_json
    )
    return ReleaseLock(
        release=release,
        version=manifest.version,
        manifest=manifest_digest,
        inputs=manifest.inputs.flat(),
        history=[entry],
    )


def regraded(lock: ReleaseLock, manifest_digest: str, manifest: Manifest) -> ReleaseLock:
    """The lock after a re-grade: the new manifest version appended to the history."""
    inputs = manifest.inputs.flat()
    entry = LockVersion(
        version=manifest.version,
        manifest=manifest_digest,
        release_json=manifest.release_json,
        changed=changed(lock, inputs),
    )
    return ReleaseLock(
        release=lock.release,
        version=manifest.version,
        manifest=manifest_digest,
        inputs=inputs,
        history=[*lock.history, entry],
    )


def write(root: Path, lock: ReleaseLock) -> Path:
    path = path_of(root, lock.release)
    text = json.dumps(lock.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    write_atomic(path, text.encode())
    return path
