"""Case formats: case.yaml (provenance: provenance.py; contract: contract.py; sealed grading:
grading.py)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from recon.model.base import Versioned
from recon.model.provenance import Artifact, Digest, Package, Provenance
from recon.model.values import Id

__all__ = ["Artifact", "Case", "Condition", "Digest", "Id", "Package", "Provenance"]

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
