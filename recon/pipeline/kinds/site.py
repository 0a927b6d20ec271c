"""The site cell: a release's static site, from whitelisted data only (DESIGN §5.3).

Reads: ``aggregate.release``; each active case's ``evidence.<case>.bundle`` (brief,
contract, evidence stills and motion); each valid attempt's
``capture.<attempt>.captures`` (the full-page stills) and ``probe.<attempt>.checkpoints``
(the Candidate's checkpoint screenshots, which the release JSON's checks name by digest);
and, as extra input ``cases``, the allow-listed facts of each case (``case.yaml`` and the
attribution part of ``provenance.yaml``, :func:`recon.site.cases.case_facts`). Writes:
``site``, a tree of the site's files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon.model import Case, Provenance, ReleaseResult, load_yaml
from recon.model.captures import PointFiles
from recon.pipeline.kinds._base import Produced, tree
from recon.site import PublicCase, build_site, case_facts
from recon.store import put_files, tree_files

if TYPE_CHECKING:
    from recon.pipeline.cells import Cell, Runtime


def site_extra(rt: Runtime, cell: Cell) -> dict[str, str]:
    """The public facts of the release's cases, stored: their digest enters the key."""
    facts = {}
    for case_id in rt.project.release(cell.params["release"]).cases:
        folder = rt.project.cases[case_id].folder
        found = folder / "provenance.yaml"
        provenance = load_yaml(Provenance, found) if found.is_file() else None
        facts[case_id] = case_facts(load_yaml(Case, folder / "case.yaml"), provenance)
    return {"cases": rt.store.put_json(facts)}


def site(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    store = rt.store
    result = ReleaseResult.model_validate(store.read_json(inputs["aggregate.release"]))
    facts = store.read_json(inputs["cases"])
    cases = {}
    for case in result.active_cases:
        bundle = inputs[f"evidence.{case}.bundle"]
        wanted = {
            path: store.read_bytes(f.digest)
            for path, f in tree_files(store, bundle).items()
            if path in ("brief.md", "contract.yaml") or path.startswith("evidence/")
        }
        cases[case] = PublicCase.from_bundle(facts.get(case, {}), bundle, wanted)
    captures: dict[str, dict[str, bytes]] = {}
    shots: dict[str, bytes] = {}
    for summary in result.attempts:
        captured = inputs.get(f"capture.{summary.id}.captures")
        if captured is None or summary.outcome != "valid":
            continue
        captures[summary.id] = {
            path.split("/")[0]: store.read_bytes(f.digest)
            for path, f in tree_files(store, captured).items()
            if path.endswith(f"/{PointFiles.FULL}")
        }
        checkpoints = inputs.get(f"probe.{summary.id}.checkpoints")
        for f in tree_files(store, checkpoints).values() if checkpoints else []:
            shots[f.digest] = store.read_bytes(f.digest)
    files = build_site(result, cases, captures, shots)
    return Produced({"site": tree(put_files(store, files))})
