"""``recon case freeze``: write a fetched artifact as a case's sealed reference, pinned.

The reference folder becomes exactly the fetched files and ``provenance.yaml`` pins their
source and every file's blake3. Freezing is idempotent: the same files give the same
reference, the same provenance bytes and no version change. Different files are never a
silent overwrite: the case's ``version`` in ``case.yaml`` goes up by one and provenance's
``history`` records what was added, changed and removed, and from which source version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from recon.curate.pin import REFERENCE, Tree, artifacts, difference, digests
from recon.curate.scaffold import SCAFFOLD_NOTE
from recon.curate.sources import Fetched
from recon.errors import ConfigError
from recon.model import Case, load_yaml
from recon.model.base import shown
from recon.model.provenance import Provenance, VersionChange
from recon.store import replace_dir, write_atomic

FILL_IN = "fill in"


@dataclass(frozen=True)
class Frozen:
    """What a freeze did: the case version now, and the paths it added, changed, removed."""

    version: int
    added: list[str]
    changed: list[str]
    removed: list[str]

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.changed or self.removed)


def freeze_reference(folder: Path, sealed: Path, fetched: Fetched, notes: str | None) -> Frozen:
    """Write ``fetched`` as the reference of the case in ``folder`` (sealed part in
    ``sealed``), its provenance, and a version bump when the files differ."""
    case_file = folder / "case.yaml"
    case = load_yaml(Case, case_file)
    reference = sealed / "reference"
    before = _current(reference)
    added, changed, removed = difference(before, digests(fetched.files))
    old = _provenance(folder / "provenance.yaml")
    version = case.version
    history = list(old.history) if old else []
    if (added or changed or removed) and before and not _scaffolded(old):
        version += 1
        history.append(
            VersionChange(
                version=version, source_version=fetched.version, added=added,
                changed=changed, removed=removed,
                note=f"frozen from {fetched.kind} {fetched.package}@{fetched.version}",
            )
        )  # fmt: skip
        _bump(case_file, case.version, version)
    if added or changed or removed:
        _write_tree(reference, fetched.files)
    provenance = _pin(fetched, old, notes, history)
    write_atomic(folder / "provenance.yaml", dump(provenance).encode("utf-8"))
    return Frozen(version, added, changed, removed)


def _scaffolded(old: Provenance | None) -> bool:
    """The reference is still the placeholder of ``recon case new`` (its first freeze)."""
    return old is not None and old.notes.startswith(SCAFFOLD_NOTE)


def _current(reference: Path) -> dict[str, str]:
    if not reference.is_dir():
        return {}
    from recon.curate.pin import read_tree

    return digests(read_tree(reference))


def _provenance(path: Path) -> Provenance | None:
    if not path.is_file():
        return None
    try:
        return load_yaml(Provenance, path)
    except ConfigError:
        return None  # replaced by the freeze; the old one could not be read anyway


def _pin(
    fetched: Fetched, old: Provenance | None, notes: str | None, history: list[VersionChange]
) -> Provenance:
    kept_notes = old.notes if old is not None and not _scaffolded(old) else ""
    return Provenance(
        publisher=fetched.publisher or (old.publisher if old else "") or FILL_IN,
        kind=fetched.kind,
        package=fetched.package,
        version=fetched.version,
        registry=fetched.registry,
        tarball_integrity=fetched.integrity,
        license=fetched.license or (old.license if old else "") or FILL_IN,
        artifacts=artifacts(fetched.files, fetched.prefix),
        notes=kept_notes if notes is None else notes,
        history=history,
    )


def dump(provenance: Provenance) -> str:
    """provenance.yaml's text: the model's fields in order, defaults left out."""
    data = provenance.model_dump(mode="json", exclude_defaults=True)
    data = {"schema_version": Provenance.SCHEMA_VERSION, **data}
    return yaml.safe_dump(data, sort_keys=False, width=100, allow_unicode=True)


def _bump(case_file: Path, old: int, new: int) -> None:
    """Set ``version:`` in case.yaml, keeping its comments."""
    text = case_file.read_text(encoding="utf-8")
    bumped, count = re.subn(rf"(?m)^version:\s*{old}\s*$", f"version: {new}", text)
    if count != 1:
        raise ConfigError(
            f"{shown(case_file)}: version: cannot find the line `version: {old}` to bump; "
            "write it on a line of its own"
        )
    write_atomic(case_file, bumped.encode("utf-8"))


def _write_tree(reference: Path, files: Tree) -> None:
    """Replace the reference folder with exactly ``files`` (atomically, by rename)."""
    staging = reference.with_name(reference.name + ".freezing")
    if staging.exists():
        import shutil

        shutil.rmtree(staging)
    for rel, data in files.items():
        write_atomic(staging / rel, data)
    replace_dir(staging, reference)


__all__ = ["REFERENCE", "Frozen", "dump", "freeze_reference"]
