"""Where everything lives in a store: the one module that spells a store path.

::

    <store>/objects/<d[:2]>/<d>         content-addressed blobs (recon.store.objects)
    <store>/quarantine/                 objects that did not hash to their name
    <store>/actions/<k[:2]>/<k>.json    the action cache (recon.store.actions)
    <store>/cells/<kind>/<name>.json    each cell's pointer: its last key and outputs
    <store>/state/stat.sqlite           the stat cache (recon.store.statcache)
    <store>/state/codegraph.json        what was read of each module (recon.pipeline.codegraph)
    <store>/state/gc.lock               builds share it, gc takes it (recon.store.guard)
    <store>/state/stamps/<release>.json each release's no-op stamp (recon.pipeline.stamp)
    <store>/state/progress/<release>.json  a build's progress snapshot (recon status)
    <store>/state/setup/noop.json       the cached no-op plan (recon.pipeline.noop)
    <store>/deps/                       the offline dependency store, unless RECON_DEPS
    <store>/ladder/                     the curator's ladder runs (recon.curate.ladder_run)
    <store>/cache/studies/              renders of studies' pages (recon.calibrate.renders)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StoreLayout:
    """The paths of the store rooted at ``root``."""

    root: Path

    @property
    def objects(self) -> Path:
        return self.root / "objects"

    @property
    def quarantine(self) -> Path:
        return self.root / "quarantine"

    @property
    def actions(self) -> Path:
        return self.root / "actions"

    @property
    def cells(self) -> Path:
        return self.root / "cells"

    def pointer(self, kind: str, name: str) -> Path:
        return self.cells / kind / f"{name}.json"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def stat_db(self) -> Path:
        return self.state / "stat.sqlite"

    @property
    def codegraph(self) -> Path:
        return self.state / "codegraph.json"

    @property
    def gc_lock(self) -> Path:
        return self.state / "gc.lock"

    def stamp(self, release: str) -> Path:
        return self.state / "stamps" / f"{release}.json"

    def progress(self, release: str) -> Path:
        return self.state / "progress" / f"{release}.json"

    @property
    def setup_cache(self) -> Path:
        return self.state / "setup" / "noop.json"

    @property
    def deps(self) -> Path:
        return self.root / "deps"

    @property
    def ladder(self) -> Path:
        return self.root / "ladder"

    @property
    def study_cache(self) -> Path:
        return self.root / "cache" / "studies"
