"""The kind table: every cell kind of the build DAG (DESIGN §4), one record of facets each.

Every fact about a kind that another layer acts on is a facet of its record here, and every
set of kinds the harness uses (:data:`KIND_MODULES`, :data:`CODE_FREE`, :data:`CHECKED_KINDS`,
:data:`LONG_KINDS`, :data:`BROWSER_KINDS`, the three scopes, :data:`CRITICAL`,
:data:`WITHHELD`, :data:`RUN_METADATA`, :data:`BUILD_ONLY`, :data:`CELL_FORMAT`) is derived
from it, never listed by hand. No facet has a default: a record that lacks one does not load,
and ``tests/model/test_kinds.py`` fails when a :data:`CellKind` has no record.

A new kind touches four files: its record here (and its name in :data:`CellKind`), its
module in ``recon/pipeline/kinds/``, the cells :mod:`recon.pipeline.graph` makes of it, and
its module's row in ``tests/pipeline/test_keys.py``.

This module imports nothing of ``recon``: it is below every layer, and it is in every code
kind's closure (:mod:`recon.model.records` imports it), so an edit re-keys every such kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

CellKind = Literal[
    "evidence",
    "workspace",
    "image",
    "attempt",
    "oracle",
    "capture",
    "probe",
    "grade",
    "aggregate",
    "site",
    "manifest",
]
Scope = Literal["attempt", "case", "release"]


@dataclass(frozen=True)
class KindFacets:
    """What the harness knows of one cell kind. Every field is required."""

    module: str
    """The ``recon`` module whose ``<kind>`` function computes the cell; the start of the
    kind's code closure (:mod:`recon.pipeline.codegraph`)."""
    code_free: bool
    """Its key holds no harness code: no harness change ever re-runs it (an agent)."""
    long: bool
    """Worth shipping to a worker (:mod:`recon.pipeline.executor`): the others run in the
    coordinator."""
    browser: bool
    """It renders in the build's shared browser (a Ray task asks for a ``browser``)."""
    deterministic: bool
    """Re-executing it gives the same outputs, so ``recon check`` may re-run and compare it
    (not an agent, not an engine build)."""
    scopes: tuple[Scope, ...]
    """What its cells are one per (``recon plan`` scales each scope by its own factor): an
    attempt, a case (the reference's and the starter's probe and capture are per case), or a
    release."""
    critical: int | None
    """Its step on one attempt's critical path (``recon plan``); kinds of one step run side
    by side. None: off the path."""
    withheld: bool
    """Its outputs are digests of sealed-side objects: the published manifest shows its keys,
    never its outputs."""
    run_metadata: tuple[str, ...]
    """Outputs that record how a cell ran (its duration, its logs), not what it made: kept
    out of every downstream key and of the manifest (DESIGN §4, "key on content")."""
    build_only: tuple[str, ...]
    """The only outputs of it that a cell reading what it built takes (capture, probe and
    grade read an attempt's ``build``, never its record)."""
    format: int
    """Its record format: bump it to re-key the kind on purpose (the only way to re-key
    attempts short of changing their declared inputs)."""


# fmt: off
KINDS: dict[CellKind, KindFacets] = {
    "evidence": KindFacets(
        module="recon.pipeline.kinds.evidence", code_free=False, long=False, browser=False,
        deterministic=True, scopes=("case",), critical=None, withheld=False,
        run_metadata=(), build_only=(), format=2),
    "workspace": KindFacets(
        module="recon.pipeline.kinds.workspace", code_free=False, long=False, browser=False,
        deterministic=True, scopes=("case",), critical=None, withheld=False,
        run_metadata=(), build_only=(), format=2),
    "image": KindFacets(
        module="recon.pipeline.kinds.image", code_free=False, long=False, browser=False,
        deterministic=False, scopes=("release",), critical=None, withheld=False,
        run_metadata=(), build_only=(), format=2),
    "attempt": KindFacets(
        module="recon.pipeline.kinds.attempt", code_free=True, long=True, browser=False,
        deterministic=False, scopes=("attempt",), critical=0, withheld=False,
        run_metadata=("run", "gateway"), build_only=("build",), format=2),
    "oracle": KindFacets(
        module="recon.pipeline.kinds.render", code_free=False, long=True, browser=True,
        deterministic=True, scopes=("case",), critical=None, withheld=True,
        run_metadata=(), build_only=(), format=2),
    "capture": KindFacets(
        module="recon.pipeline.kinds.render", code_free=False, long=True, browser=True,
        deterministic=True, scopes=("attempt", "case"), critical=1, withheld=False,
        run_metadata=(), build_only=(), format=2),
    "probe": KindFacets(
        module="recon.pipeline.kinds.probe", code_free=False, long=True, browser=True,
        deterministic=True, scopes=("attempt", "case"), critical=1, withheld=True,
        run_metadata=(), build_only=(), format=2),
    "grade": KindFacets(
        module="recon.pipeline.kinds.grade", code_free=False, long=True, browser=False,
        deterministic=True, scopes=("attempt",), critical=2, withheld=True,
        run_metadata=(), build_only=(), format=2),
    "aggregate": KindFacets(
        module="recon.pipeline.kinds.release", code_free=False, long=False, browser=False,
        deterministic=True, scopes=("release",), critical=3, withheld=False,
        run_metadata=(), build_only=(), format=2),
    "site": KindFacets(
        module="recon.pipeline.kinds.site", code_free=False, long=False, browser=False,
        deterministic=True, scopes=("release",), critical=4, withheld=False,
        run_metadata=(), build_only=(), format=2),
    "manifest": KindFacets(
        module="recon.pipeline.kinds.manifest", code_free=False, long=False, browser=False,
        deterministic=True, scopes=("release",), critical=5, withheld=False,
        run_metadata=(), build_only=(), format=2),
}
# fmt: on
"""Every cell kind's facets, in DAG order (the order of :data:`CellKind`, of ``doit list``
and of ``recon diff``)."""


def kinds_where(test: Callable[[KindFacets], bool]) -> tuple[str, ...]:
    """The kinds whose facets pass ``test``, in table order."""
    return tuple(kind for kind, facets in KINDS.items() if test(facets))


KIND_MODULES: dict[str, str] = {kind: facets.module for kind, facets in KINDS.items()}
"""The module implementing each cell kind (its ``<kind>`` function computes the cell)."""
CELL_FORMAT: dict[str, int] = {kind: facets.format for kind, facets in KINDS.items()}
CODE_FREE = frozenset(kinds_where(lambda k: k.code_free))
"""Kinds whose key holds no harness code: no harness change ever re-runs an agent."""
CHECKED_KINDS = kinds_where(lambda k: k.deterministic)
"""Every deterministic kind, in table order: what ``recon check`` re-executes."""
LONG_KINDS = frozenset(kinds_where(lambda k: k.long))
"""The kinds worth shipping to a worker: agents, the browser and the grader."""
BROWSER_KINDS = frozenset(kinds_where(lambda k: k.browser))
"""The kinds that render in the shared browser."""
ATTEMPT_KINDS = frozenset(kinds_where(lambda k: "attempt" in k.scopes))
CASE_KINDS = frozenset(kinds_where(lambda k: "case" in k.scopes))
RELEASE_KINDS = frozenset(kinds_where(lambda k: "release" in k.scopes))
CRITICAL: tuple[tuple[str, ...], ...] = tuple(
    tuple(kind for kind, facets in KINDS.items() if facets.critical == step)
    for step in sorted({f.critical for f in KINDS.values() if f.critical is not None})
)
"""One attempt's critical path, step by step: the kinds of one step run side by side."""
WITHHELD = tuple(sorted(kinds_where(lambda k: k.withheld)))
"""Cell kinds whose outputs are digests of sealed-side objects, sorted (the published
manifest lists them)."""
RUN_METADATA: dict[str, tuple[str, ...]] = {
    kind: facets.run_metadata for kind, facets in KINDS.items() if facets.run_metadata
}
"""Kind -> its outputs that are run metadata, never part of a downstream key or the
manifest."""
BUILD_ONLY: dict[str, tuple[str, ...]] = {
    kind: facets.build_only for kind, facets in KINDS.items() if facets.build_only
}
"""Dep label (its kind) -> the only outputs a cell reading what it built takes of it."""
