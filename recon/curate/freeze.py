"""Curator tool: render a case's sealed reference into its public evidence screenshots.

This is the only place sealed material flows toward public/: as pixels of the declared
viewports, which is what the Candidate is meant to see.
"""

from __future__ import annotations

from pathlib import Path

from recon.store import atomic


def render_evidence(
    reference: Path, public: Path, viewports: list[tuple[str, int, int]]
) -> list[Path]:
    """Write ``public/evidence/<viewport>.png`` (full page) for each viewport at route /."""
    from recon.render import Viewport, capture, open_browser

    def read(rel: str) -> bytes | None:
        path = (reference / rel).resolve()
        if reference.resolve() not in path.parents or not path.is_file():
            return None
        return path.read_bytes()

    written = []
    with open_browser() as browser:
        for name, width, height in viewports:
            shot = capture(browser, read, "/", Viewport(name, width, height))
            out = public / "evidence" / f"{name}.png"
            atomic.write_atomic(out, shot.full_png)
            written.append(out)
    return written
