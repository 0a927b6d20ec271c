"""The aggregate cell: a release's scores by its fixed aggregation rule (DESIGN §7).

Reads: every attempt's ``record`` and ``grade`` of the release, the image cell of each
backend its entries use (``image.<backend>.image``: what an attempt's record must name),
and, as extra input ``withdrawals``, the active withdrawals of
``releases/<id>.withdrawals.json``; the release definition, the protocol digest and each
entry's digest and skill digest are parameters. Writes: ``release``, the release JSON
(:class:`~recon.model.ReleaseResult`), and ``sidecars``, a tree of the sidecars of the
attempts it withdrew automatically (``<attempt>.json``; empty when none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon.model import Active, AttemptRecord
from recon.pipeline.kinds._base import Produced, blob, is_skipped, tree
from recon.release.aggregate import Conditions, Graded
from recon.release.aggregate import aggregate as aggregate_release
from recon.release.withdrawals import active_json, load
from recon.store import canonical_json, put_files

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell, Runtime


def aggregate_extra(rt: Runtime, cell: Cell) -> dict[str, str]:
    """The release's active withdrawals, stored: their digest enters the key."""
    active = active_json(load(rt.project.root, cell.params["release"]))
    return {"withdrawals": rt.store.put_json(active)}


def aggregate(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    p = cell.params
    release = rt.project.release(p["release"])
    graded = []
    for attempt_id in p["attempts"]:
        digest = inputs[f"attempt.{attempt_id}.record"]
        record = AttemptRecord.model_validate(rt.store.read_json(digest))
        table = rt.store.read_json(inputs[f"grade.{attempt_id}.grade"])
        graded.append(Graded(attempt_id, record, digest, None if is_skipped(table) else table))
    conditions = Conditions(
        protocol_digest=p["protocol"],
        images={b: inputs[f"image.{b}.image"] for b in p["backends"]},
        entries={e: facts["digest"] for e, facts in p["entries"].items()},
        skills={e: facts["skills"] for e, facts in p["entries"].items()},
    )
    withdrawals = [Active.model_validate(a) for a in rt.store.read_json(inputs["withdrawals"])]
    done = aggregate_release(release, rt.project.entries, graded, conditions, withdrawals)
    sidecars = {
        f"{attempt}.json": canonical_json(sidecar.model_dump(mode="json"))
        for attempt, sidecar in done.sidecars.items()
    }
    return Produced(
        {
            "release": blob(rt.store, done.result.model_dump(mode="json")),
            "sidecars": tree(put_files(rt.store, sidecars)),
        }
    )
