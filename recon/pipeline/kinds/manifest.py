"""The manifest cell: every input and output digest of a release (DESIGN §4).

Reads: the pointer of every upstream cell of the release (their keys and outputs) and the
release's input digests, toolchain and manifest version (parameters). Writes: ``manifest``, a
:class:`~recon.model.Manifest` blob. Run metadata outputs (an attempt's ``run``: its
duration and logs) are left out: two cold builds of the same inputs give the same
manifest, byte for byte. The release's ``runs.json`` lists them instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon.model import ManifestCell, ManifestInputs
from recon.model.kinds import RUN_METADATA
from recon.pipeline.kinds._base import Produced, blob
from recon.release.manifest import build_manifest

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell, Runtime


def manifest(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    cells = []
    for dep in cell.deps.values():
        pointer = rt.require_pointer(dep)
        meta = RUN_METADATA.get(dep.kind, ())
        content = {k: v for k, v in pointer.outputs.items() if k not in meta}
        cells.append(
            ManifestCell(kind=pointer.kind, name=pointer.name, key=pointer.key, outputs=content)
        )
    release = cell.params["release"]
    built = build_manifest(
        release,
        ManifestInputs.model_validate(cell.params["inputs"]),
        cells,
        release_json=inputs[f"aggregate:{release}.release"],
        site=inputs[f"site:{release}.site"],
        version=cell.params.get("version", 1),
    )
    return Produced({"manifest": blob(rt.store, built.model_dump(mode="json"))})
