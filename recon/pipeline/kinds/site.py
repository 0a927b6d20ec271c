"""The site cell: a release's static site, from whitelisted data only (DESIGN §5.3).

Reads: ``aggregate.release``, each active case's ``evidence.<case>.bundle`` (its public
stills) and each valid attempt's ``capture.<attempt>.captures`` (the full-page stills).
Writes: ``site``, a tree of the site's files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon.model import ReleaseResult
from recon.model.captures import PointFiles
from recon.pipeline.kinds._base import Produced, tree
from recon.site import build_site
from recon.store import put_files, tree_files

if TYPE_CHECKING:
    from recon.pipeline.cells import Cell, Runtime


def site(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    store = rt.store
    result = ReleaseResult.model_validate(store.read_json(inputs["aggregate.release"]))
    evidence_pngs: dict[str, dict[str, bytes]] = {}
    for case in result.active_cases:
        bundle = tree_files(store, inputs[f"evidence.{case}.bundle"])
        evidence_pngs[case] = {
            path.split("/", 1)[1]: store.read_bytes(f.digest)
            for path, f in bundle.items()
            if path.startswith("evidence/") and path.endswith(".png")
        }
    captures: dict[str, dict[str, bytes]] = {}
    for summary in result.attempts:
        captured = inputs.get(f"capture.{summary.id}.captures")
        if captured is None or summary.outcome != "valid":
            continue
        captures[summary.id] = {
            path.split("/")[0]: store.read_bytes(f.digest)
            for path, f in tree_files(store, captured).items()
            if path.endswith(f"/{PointFiles.FULL}")
        }
    files = build_site(result, evidence_pngs, captures)
    return Produced({"site": tree(put_files(store, files))})
