"""The layers of ``recon`` (DESIGN §8): imports point down, and nothing imports in a circle.

:data:`LAYERS` is the one table of the layering; README's Architecture section says it in
words. Every import counts, at module level, inside a function or under ``TYPE_CHECKING``
(:mod:`tests.imports`). Fast: the sources are parsed, nothing is imported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from tests.imports import Import, cycle, imports, modules

LAYERS: tuple[tuple[str, ...], ...] = (
    ("recon", "errors", "_lazy"),  # the package root, the error family, lazy re-exports
    ("store",),
    ("model",),
    ("gateway",),  # the model gateway: the project loader reads its prices and settings
    ("project",),  # loading cases, entries and releases
    ("sandbox", "render", "grade"),
    ("agents",),
    ("curate", "release"),
    ("site",),
    ("calibrate",),
    ("pipeline",),
    ("commands",),  # the command line: recon/commands/, recon/cli.py, recon/__main__.py
)
"""Lowest first. A module may import a module of its own unit or of a lower layer, never
one of its own layer's other units nor of a layer above."""

RANK = {unit: rank for rank, layer in enumerate(LAYERS) for unit in layer}
COMMANDS = ("recon.cli", "recon.__main__")


def unit(module: str) -> str:
    """The unit of the table a module belongs to: its sub-package of ``recon``, or
    ``commands`` for the command line (``recon.commands`` and its two fronts)."""
    parts = module.split(".")
    if module in COMMANDS:
        return "commands"
    return parts[1] if len(parts) > 1 else parts[0]


def test_every_module_has_a_layer() -> None:
    missing = sorted({unit(m) for m in modules()} - RANK.keys())
    assert missing == [], "add each to LAYERS (and to README's Architecture section)"


def test_every_import_points_down() -> None:
    wrong = [
        f"{edge}: {unit(edge.importer)} imports {unit(edge.target)}, "
        + ("beside it" if RANK[unit(edge.target)] == RANK[unit(edge.importer)] else "above it")
        for edge in imports()
        if unit(edge.importer) != unit(edge.target)
        and RANK[unit(edge.target)] >= RANK[unit(edge.importer)]
    ]
    assert wrong == []


def test_no_sub_package_imports_another_in_a_circle() -> None:
    found = cycle(_graph(imports(), unit))
    assert found is None, " -> ".join(found or [])


def test_no_module_imports_another_in_a_circle() -> None:
    """Within a package too: no module imports back one that imports it (the loop that
    runs cells and the executors import the cell types, never the other way round)."""
    found = cycle(_graph(imports(), lambda module: module))
    assert found is None, " -> ".join(found or [])


def test_the_reader_sees_every_kind_of_import() -> None:
    """Function-level, ``TYPE_CHECKING`` and lazily exported imports are edges; a module's
    own packages are not."""
    edges = {str(edge).split(":")[0] + " -> " + edge.target for edge in imports()}
    assert "recon.pipeline.kinds.attempt -> recon.pipeline.runtime" in edges  # TYPE_CHECKING
    assert "recon.pipeline.cells -> recon.pipeline.kinds.attempt" in edges  # in a function
    assert "recon.pipeline.executor -> recon.pipeline.raycluster" in edges  # in a method
    assert "recon.pipeline.kinds.site -> recon.site.export" in edges  # a lazy export
    assert "recon.pipeline.kinds.site -> recon.pipeline" not in edges  # its own package


def _graph(edges: tuple[Import, ...], node: Callable[[str], str]) -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for edge in edges:
        a, b = node(edge.importer), node(edge.target)
        if a != b:
            found[a].add(b)
    return found
