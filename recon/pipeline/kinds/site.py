"""The site cell: a release's static site, from whitelisted data only (DESIGN §5.3).

Reads: ``aggregate.release``; each active case's ``evidence.<case>.bundle`` (brief,
contract, evidence stills and motion); each valid attempt's
``capture.<attempt>.captures`` (the full-page stills) and ``probe.<attempt>.checkpoints``
(the Candidate's checkpoint screenshots, which the release JSON's checks name by digest);
and, as extra inputs, ``cases``, the allow-listed facts of each case (``case.yaml`` and the
attribution part of ``provenance.yaml``, :func:`recon.site.cases.case_facts`), and
``transcripts``, the transcript of each attempt through the model gateway, read from its
recording (:func:`recon.site.transcript.transcript`). The recording is run metadata, so it
is not an input itself: the transcript leaves its timings out, and its digest (content
only) is what enters the key. Writes: ``site``, a tree of the site's files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon.model import Case, Provenance, Recording, ReleaseResult, load_yaml
from recon.model.captures import PointFiles
from recon.model.transcript import Transcript
from recon.pipeline.kinds._base import Produced, tree
from recon.site import PublicCase, build_site, case_facts
from recon.site.transcript import transcript
from recon.store import put_files, tree_files

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell, Runtime


def site_extra(rt: Runtime, cell: Cell) -> dict[str, str]:
    """The public facts of the release's cases, stored: their digest enters the key."""
    facts = {}
    for case_id in rt.project.release(cell.params["release"]).cases:
        folder = rt.project.cases[case_id].folder
        found = folder / "provenance.yaml"
        provenance = load_yaml(Provenance, found) if found.is_file() else None
        facts[case_id] = case_facts(load_yaml(Case, folder / "case.yaml"), provenance)
    return {"cases": rt.store.put_json(facts), "transcripts": _transcripts(rt, cell)}


def _transcripts(rt: Runtime, cell: Cell) -> str:
    """The transcripts of the release's gateway attempts (attempt -> transcript), stored."""
    made = {}
    for dep in cell.deps["aggregate"].deps.values():
        pointer = rt.read_pointer(dep) if dep.kind == "attempt" else None
        if pointer is not None and "gateway" in pointer.outputs:
            found = rt.store.read_json(pointer.outputs["gateway"].digest)
            made[dep.name] = transcript(Recording.model_validate(found)).model_dump(mode="json")
    return rt.store.put_json(dict(sorted(made.items())))


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
    transcripts = {
        attempt: Transcript.model_validate(data)
        for attempt, data in store.read_json(inputs["transcripts"]).items()
    }
    files = build_site(result, cases, captures, shots, transcripts)
    return Produced({"site": tree(put_files(store, files))})
