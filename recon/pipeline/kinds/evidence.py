"""The evidence cell: a case's public folder, frozen as a tree (DESIGN §4).

Reads: the case's ``public/`` folder (extra input ``public``). Writes: ``bundle``, the tree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon.curate.bundle import freeze_evidence
from recon.pipeline.kinds._base import Produced, tree

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell, Runtime


def evidence_extra(rt: Runtime, cell: Cell) -> dict[str, str]:
    return {"public": freeze_evidence(rt.store, rt.project.cases[cell.name].public)}


def evidence(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    return Produced({"bundle": tree(inputs["public"])})
