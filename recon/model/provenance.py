"""provenance.yaml: where a case's authoritative artifact came from, pinned.

A case's reference is copied from one main *source* (the top-level fields) and maybe
further ones (``packages``). A source is of one kind, and its ``tarball_integrity`` is
written the way that kind's own tooling writes it:

- ``npm``: a package from the npm registry; ``sha512-<base64>`` as in ``npm pack --json``;
- ``deb``: a Debian package; ``sha256:<hex>`` of the .deb, as in the archive's Packages;
- ``wheel``: a Python wheel; ``sha256:<hex>`` of the .whl, as on PyPI;
- ``local``: a folder the curator froze (``recon case freeze --from DIR``);
  ``blake3:<hex>`` of its tree listing (recon.store.tree);
- ``generator``: the tool that generated published pages (a static site generator);
  ``inputs`` says what it built them from; its integrity is empty when the tool itself
  was not fetched (only named by its output, a ``<meta name=generator>`` say).

Each pinned file (``artifacts``) gives its path in the case, its path inside the source
and its blake3; ``history`` records, per case version, how the artifact differed from the
version before (``recon case freeze`` appends to it).

Version 1 files had no ``kind``: it is derived from ``registry`` when they are read.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from recon.model.base import Strict, Versioned

__all__ = [
    "INTEGRITY",
    "Artifact",
    "Digest",
    "Package",
    "Provenance",
    "SourceKind",
    "VersionChange",
]

Digest = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
SourceKind = Literal["npm", "deb", "wheel", "local", "generator"]
INTEGRITY: dict[str, tuple[str, str]] = {
    "npm": (r"^sha(1|256|384|512)-[A-Za-z0-9+/]+=*$", "sha512-<base64> (npm pack --json)"),
    "deb": (r"^sha256:[0-9a-f]{64}$", "sha256:<hex> of the .deb"),
    "wheel": (r"^sha256:[0-9a-f]{64}$", "sha256:<hex> of the .whl"),
    "local": (r"^blake3:[0-9a-f]{64}$", "blake3:<hex> of the folder's tree"),
    "generator": (
        r"^((sha256|blake3):[0-9a-f]{64}|sha512-[A-Za-z0-9+/]+=*)?$",
        "empty or a digest",
    ),
}
"""Per source kind: the pattern of its integrity and how to write it."""
_V1_KINDS = (("npm", "npm"), ("debian", "deb"), ("pypi", "wheel"), ("local", "local"))


class Package(Strict):
    """A pinned source some artifacts were copied from (or, ``generator``, built by)."""

    kind: SourceKind
    package: str = Field(min_length=1, max_length=214)
    version: str = Field(min_length=1, max_length=128)
    registry: str = Field(max_length=128)
    tarball_integrity: str = Field(max_length=200)
    license: str = Field(max_length=128)
    inputs: str = Field(default="", max_length=2000)

    @model_validator(mode="after")
    def _integrity(self) -> Package:
        _check_source(self.kind, self.tarball_integrity, self.inputs)
        return self


def _check_source(kind: str, integrity: str, inputs: str) -> None:
    pattern, form = INTEGRITY[kind]
    if not re.match(pattern, integrity):
        raise ValueError(
            f"tarball_integrity: {integrity[:80]!r} is not how a {kind} source is pinned; "
            f"write {form}"
        )
    if (kind == "generator") != bool(inputs):
        raise ValueError(
            "`inputs` (what the generator built the pages from) goes with, and only with, "
            "kind: generator; give both or neither"
        )


class Artifact(Strict):
    """One authoritative file pinned by provenance.

    ``source`` is its path inside the source; ``package`` names the source it came from
    when that is one of ``Provenance.packages`` rather than the main one. An ``authored``
    file was written by the curators (``source`` then says how), not copied from any
    published source.
    """

    path: str
    source: str
    blake3: Digest
    package: str | None = None
    authored: bool = False


class VersionChange(Strict):
    """How the artifact of case version ``version`` differs from the version before."""

    version: int = Field(ge=1, le=1_000_000)
    source_version: str = Field(max_length=128)
    added: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    note: str = ""


class Provenance(Versioned):
    """provenance.yaml: the main source (top-level fields), further ones, the pinned files."""

    SCHEMA_VERSION: ClassVar[int] = 2
    MIGRATES_FROM: ClassVar[tuple[int, ...]] = (1,)
    schema_version: int = 2
    publisher: str
    kind: SourceKind
    package: str
    version: str
    registry: str
    tarball_integrity: str
    license: str
    inputs: str = ""
    packages: list[Package] = Field(default_factory=list)
    artifacts: list[Artifact] = Field(min_length=1)
    notes: str = ""
    history: list[VersionChange] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _from_v1(cls, data: Any) -> Any:
        """Version 1 had no ``kind``: derive it from ``registry``."""
        if not isinstance(data, dict) or data.get("schema_version") != 1:
            return data
        out = dict(data, schema_version=2, kind=v1_kind(data.get("registry")))
        packages = data.get("packages")
        if isinstance(packages, list):
            out["packages"] = [
                dict(p, kind=v1_kind(p.get("registry"))) if isinstance(p, dict) else p
                for p in packages
            ]
        return out

    @model_validator(mode="after")
    def _consistent(self) -> Provenance:
        _check_source(self.kind, self.tarball_integrity, self.inputs)
        known = {self.package} | {p.package for p in self.packages}
        paths = [a.path for a in self.artifacts]
        twice = sorted({p for p in paths if paths.count(p) > 1})
        if twice:
            raise ValueError(f"artifacts: {twice} pinned twice; pin each path once")
        for artifact in self.artifacts:
            if artifact.authored and artifact.package is not None:
                raise ValueError(f"{artifact.path}: an authored file names no package")
            if artifact.package is not None and artifact.package not in known:
                raise ValueError(
                    f"{artifact.path}: package {artifact.package!r} is not pinned; "
                    f"add it to packages (pinned: {sorted(known)})"
                )
        return self


def v1_kind(registry: object) -> str:
    """The source kind a version-1 ``registry`` names (``npm``, ``debian (bookworm)``...)."""
    text = str(registry or "").lower()
    for prefix, kind in _V1_KINDS:
        if text.startswith(prefix):
            return kind
    return text  # an unknown registry is refused by `kind`'s literal
