"""The two sides of ``recon diff``: a manifest path or folder (with its release.json), a
release id (``releases/<id>/``), or ``<id>@<version>``, a version of a frozen release read
from its lock's history and the store."""

from __future__ import annotations

import re
from pathlib import Path

from recon.errors import ConfigError, ReconError
from recon.model import Manifest, ReleaseLock, ReleaseResult
from recon.model.base import load_json
from recon.project.settings import Settings

RELEASE_ID = re.compile(r"^[a-z0-9][a-z0-9-]*$")
VERSIONED = re.compile(r"^([a-z0-9][a-z0-9-]*)@([0-9]+)$")


def _manifest_path(arg: str, project_root: Path) -> Path:
    path = Path(arg)
    if path.is_dir():
        return path / "manifest.json"
    if path.suffix == ".json" or "/" in arg or path.exists():
        return path
    if RELEASE_ID.match(arg):
        return project_root / "releases" / arg / "manifest.json"
    raise ConfigError(
        f"{arg}: neither a manifest.json path nor a release id; "
        "pass a path like releases/<id>/manifest.json or a release id like 2025q1"
    )


def _locked(
    release: str, version: int, project_root: Path, settings: Settings
) -> tuple[Manifest, ReleaseResult]:
    """Version ``version`` of a frozen release, from its lock's history and the store."""
    from recon.project.loader import Project
    from recon.release.lock import load

    lock: ReleaseLock | None = load(project_root, release)
    if lock is None:
        raise ConfigError(
            f"{release}@{version}: releases/{release}.lock not found; only a frozen release "
            "has versions (`recon release freeze <id>`)"
        )
    found = lock.at(version)
    if found is None:
        known = ", ".join(str(v.version) for v in lock.history)
        raise ConfigError(
            f"{release}@{version}: no such version (releases/{release}.lock has {known})"
        )
    store = Project.open(project_root, settings).store()
    try:
        manifest = Manifest.model_validate(store.read_json(found.manifest))
        result = ReleaseResult.model_validate(store.read_json(found.release_json))
    except (ReconError, ValueError) as err:
        raise ConfigError(
            f"{release}@{version}: its manifest or release JSON is not in the store ({err}); "
            "it was collected or never built here"
        ) from None
    return manifest, result


def load_side(arg: str, project_root: Path, settings: Settings) -> tuple[Manifest, ReleaseResult]:
    """Load one side of a diff: a manifest.json path (release.json beside it), a release id,
    or ``<id>@<version>``, a version of a frozen release."""
    versioned = VERSIONED.match(arg)
    if versioned and not Path(arg).exists():
        return _locked(versioned[1], int(versioned[2]), project_root, settings)
    manifest_path = _manifest_path(arg, project_root)
    result_path = manifest_path.parent / "release.json"
    for path in (manifest_path, result_path):
        if not path.is_file():
            raise ConfigError(
                f"{path}: file not found; build the release with `doit release:<id>` "
                "or pass the path of a folder holding manifest.json and release.json"
            )
    try:
        manifest = load_json(Manifest, manifest_path)
        result = load_json(ReleaseResult, result_path)
    except ConfigError as err:
        raise ConfigError(f"{err}; fix the file or rebuild it with `doit release:<id>`") from None
    if manifest.release != result.release:
        raise ConfigError(
            f"{result_path}: release {result.release!r} does not match {manifest_path} "
            f"(release {manifest.release!r}); rebuild both with `doit release:{manifest.release}`"
        )
    return manifest, result


def stale_note(arg: str, project_root: Path) -> str | None:
    """What to say when a side is a published release marked stale (its last build
    failed), else None; a frozen version read from the store is never stale."""
    from recon.release import stale

    if VERSIONED.match(arg) and not Path(arg).exists():
        return None
    folder = _manifest_path(arg, project_root).parent
    mark = stale.load(folder)
    return None if mark is None else stale.describe(mark, folder)
