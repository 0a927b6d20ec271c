"""Reading ``releases/<id>/stale.json`` (:class:`~recon.model.StaleMark`): what ``recon
status`` and ``recon diff`` say about a release whose last build failed. The build writes
it (:func:`recon.pipeline.publish.mark_stale`)."""

from __future__ import annotations

from pathlib import Path

from recon.model import StaleMark, load_json

NAME = "stale.json"


def load(folder: Path) -> StaleMark | None:
    """The stale mark of the published release in ``folder``, or None when it is current.
    A mark that does not load is bad input (exit 2, naming the file)."""
    path = folder / NAME
    return load_json(StaleMark, path) if path.is_file() else None


def describe(mark: StaleMark, folder: Path | str) -> str:
    """One line: the release is stale, since when, and which cells failed."""
    cells = ", ".join(f"{f.cell} ({f.error})" for f in mark.failed[:3])
    more = f" and {len(mark.failed) - 3} more" if len(mark.failed) > 3 else ""
    return (
        f"STALE: the build of release {mark.release} at {mark.at} failed: {cells}{more}; "
        f"{folder} still holds an earlier build's numbers (fix the cell and build again)"
    )
