"""The workspace cell: what a Candidate starts from under one evidence condition.

Reads: ``evidence.bundle``. Writes: ``workspace``, a tree (starter, brief, contract and,
under the ``full`` condition, the evidence).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon.curate.bundle import compose_workspace
from recon.pipeline.kinds._base import Produced, tree

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell, Runtime


def workspace(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    composed = compose_workspace(rt.store, inputs["evidence.bundle"], cell.params["condition"])
    return Produced({"workspace": tree(composed)})
