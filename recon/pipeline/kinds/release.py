"""The aggregate cell: a release's scores by its fixed aggregation rule (DESIGN §7).

Reads: every attempt's ``record`` and ``grade`` of the release, and the release
definition and entries (their digests are parameters). Writes: ``release``, the release
JSON (:class:`~recon.model.ReleaseResult`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon.model import AttemptRecord
from recon.pipeline.kinds._base import Produced, blob, is_skipped
from recon.release.aggregate import Graded
from recon.release.aggregate import aggregate as aggregate_release

if TYPE_CHECKING:
    from recon.pipeline.cells import Cell, Runtime


def aggregate(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    release = rt.project.release(cell.params["release"])
    graded = []
    for attempt_id in cell.params["attempts"]:
        digest = inputs[f"attempt.{attempt_id}.record"]
        record = AttemptRecord.model_validate(rt.store.read_json(digest))
        table = rt.store.read_json(inputs[f"grade.{attempt_id}.grade"])
        graded.append(Graded(attempt_id, record, digest, None if is_skipped(table) else table))
    result = aggregate_release(release, rt.project.entries, graded)
    return Produced({"release": blob(rt.store, result.model_dump(mode="json"))})
