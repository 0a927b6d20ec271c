"""Case formats: case.yaml and provenance (contract: contract.py; sealed grading: grading.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from recon.model.base import Strict, Versioned
from recon.model.values import Id

__all__ = ["Artifact", "Case", "Condition", "Digest", "Id", "Package", "Provenance"]

Digest = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
Condition = Literal["full", "brief-only"]
_FULL: Condition = "full"


class Case(Versioned):
    """cases/<id>/case.yaml: identity and version of a task package."""

    id: Id
    version: int = Field(ge=1, le=1_000_000)
    title: str = Field(max_length=200)
    track: Literal["frozen-evidence/reconstruct"] = "frozen-evidence/reconstruct"
    active: bool = True
    evidence_conditions: list[Condition] = Field(default_factory=lambda: [_FULL])


class Artifact(Strict):
    """One authoritative file pinned by provenance.

    ``source`` is its path inside the package tarball; ``package`` names the package it
    came from when that is one of ``Provenance.packages`` rather than the main one.
    An ``authored`` file was written by the curators (``source`` then says how), not
    copied from any published package.
    """

    path: str
    source: str
    blake3: Digest
    package: str | None = None
    authored: bool = False


class Package(Strict):
    """A further published package some artifacts were copied from, pinned like the main one."""

    package: str
    version: str
    registry: str
    tarball_integrity: str
    license: str


class Provenance(Versioned):
    """provenance.yaml: where the authoritative artifact came from, pinned."""

    publisher: str
    package: str
    version: str
    registry: str
    tarball_integrity: str
    license: str
    packages: list[Package] = Field(default_factory=list)
    artifacts: list[Artifact] = Field(min_length=1)
    notes: str = ""

    @model_validator(mode="after")
    def _known_packages(self) -> Provenance:
        known = {self.package} | {p.package for p in self.packages}
        for artifact in self.artifacts:
            if artifact.authored and artifact.package is not None:
                raise ValueError(f"{artifact.path}: an authored file names no package")
            if artifact.package is not None and artifact.package not in known:
                raise ValueError(
                    f"{artifact.path}: package {artifact.package!r} is not pinned; "
                    f"add it to packages (pinned: {sorted(known)})"
                )
        return self
