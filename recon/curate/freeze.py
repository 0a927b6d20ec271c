"""Curator tool: render a case's sealed reference into its public evidence.

This is the only place sealed material flows toward public/: as pixels of the contract's
matrix, which is what the Candidate is meant to see. ``public/evidence/`` gets (the
stills named by :func:`recon.model.matrix.evidence_still`)

- ``<viewport>.png``: the full page at route ``/``, per contract viewport;
- ``<route>/<viewport>.png``: the full page at each other route (``/about.html`` ->
  ``about.html/desktop.png``, ``/blog/post/`` -> ``blog~post/desktop.png``);
- ``<viewport>--<state>.png``: the full page of each named state, per viewport it names
  (every contract viewport when it names none);
- ``motion/<name>.png`` and ``motion/<name>.webp``: each declared transition as a frame
  strip and an animated WebP (:func:`recon.render.record_motion`).

Rendering is deterministic, so running the command twice writes the same bytes: every
still is proven stable (the same pixels a frame apart, :mod:`recon.render.stills`), and
a reference whose pixels never stop changing is refused rather than frozen mid-motion. Files of
the last three kinds that the contract no longer declares are removed, so the evidence
bundle never carries a stale state or transition. A reference that cannot show what the
contract declares (a step fails, a route is missing) is the contract's problem: one
:class:`ConfigError` naming the contract field, and no evidence written for it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from recon.errors import ConfigError
from recon.model.base import shown
from recon.model.contract import Contract
from recon.model.matrix import Point
from recon.store import atomic

if TYPE_CHECKING:  # playwright loads only when evidence is rendered, not with recon.curate
    from playwright.sync_api import Browser

    from recon.render import Reader

EVIDENCE = "evidence"
MOTION = "motion"


def render_evidence(reference: Path, public: Path, contract: Contract) -> list[Path]:
    """Render the contract's stills and transitions from ``reference``; the files written."""
    from recon.render import open_browser, record_motion

    read = folder_reader(reference)
    evidence = public / EVIDENCE
    source = shown(public / "contract.yaml")
    written: list[Path] = []
    with open_browser() as browser:
        for vp in contract.viewports:
            pt = Point("/", vp)
            written.append(_still(browser, read, pt, evidence, f"{source}: viewports"))
        for route in [r for r in contract.routes if r != "/"]:
            for vp in contract.viewports:
                where = f"{source}: routes ({route})"
                written.append(_still(browser, read, Point(route, vp), evidence, where))
        for i, state in enumerate(contract.states):
            for vp in contract.viewports_of(state):
                pt = Point(state.route, vp, state.name, tuple(state.steps))
                where = f"{source}: states[{i}] at {vp.name}"
                written.append(_still(browser, read, pt, evidence, where))
        for i, transition in enumerate(contract.motion):
            vp = transition.viewport
            shot = record_motion(
                browser,
                read,
                transition.route,
                vp,
                steps=transition.steps,
                frames=transition.frames,
                step_ms=transition.step_ms,
            )
            _refuse_failure(shot.failure, f"{source}: motion[{i}]")
            base = evidence / MOTION / transition.name
            for suffix, data in ((".png", shot.strip_png), (".webp", shot.webp)):
                atomic.write_atomic(base.with_suffix(suffix), data)
                written.append(base.with_suffix(suffix))
    _remove_stale(evidence, written)
    return written


def folder_reader(reference: Path) -> Reader:
    """Serve files inside ``reference`` only."""
    root = reference.resolve()

    def read(rel: str) -> bytes | None:
        path = (root / rel).resolve()
        if root not in path.parents or not path.is_file():
            return None
        return path.read_bytes()

    return read


def _still(browser: Browser, read: Reader, pt: Point, evidence: Path, where: str) -> Path:
    """The point's full-page still, written as its evidence still under ``evidence``."""
    from recon.render.capture import capture

    out = evidence / pt.evidence_still
    shot = capture(browser, read, pt.route, pt.viewport, steps=pt.steps)
    _refuse_failure(shot.failure, where)
    if not shot.stability.stable:
        raise ConfigError(
            f"{where}: the sealed reference never holds still ({shot.stability.describe()}); "
            "make its script animations stop under prefers-reduced-motion: reduce, or fix "
            "the reference"
        )
    atomic.write_atomic(out, shot.full_png)
    return out


def _refuse_failure(failure: str | None, where: str) -> None:
    if failure:
        raise ConfigError(
            f"{where}: the sealed reference does not show it ({failure}); "
            "fix the contract or the reference"
        )


def _remove_stale(evidence: Path, written: list[Path]) -> None:
    """Remove state stills and motion files this contract no longer declares."""
    kept = set(written)
    routes = [p for p in evidence.glob("*/*.png") if p.parent.name != MOTION]
    generated = [*evidence.glob("*--*.png"), *evidence.glob(f"{MOTION}/*.png"), *routes]
    for path in [*generated, *evidence.glob(f"{MOTION}/*.webp")]:
        if path not in kept:
            path.unlink()
    for folder in {p.parent for p in routes}:
        if not any(folder.iterdir()):
            folder.rmdir()
