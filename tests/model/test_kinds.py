"""The kind table (issue 26, item 1): one record of facets per cell kind, every subset
derived from it.

Fast: imports and one read of each kind module's source. The membership of every subset is
pinned for today's eleven kinds (pinned before the table replaced the hand-kept sets, and
unchanged since), so no refactor moves a kind in or out of one; a new kind may join any.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any, get_args

import pytest

from recon.model.kinds import BROWSER_KINDS, KINDS, LONG_KINDS, CellKind, KindFacets, Scope

PACKAGE = Path(__file__).resolve().parents[2]

TODAY = ("evidence", "workspace", "image", "attempt", "oracle", "capture", "probe", "grade",
         "aggregate", "site", "manifest")  # fmt: skip

# name -> today's value; ordered values (tuples of kinds, dicts) are compared in order
PINNED: dict[str, Any] = {
    "kinds": TODAY,
    "modules": {
        "evidence": "recon.pipeline.kinds.evidence",
        "workspace": "recon.pipeline.kinds.workspace",
        "image": "recon.pipeline.kinds.image",
        "attempt": "recon.pipeline.kinds.attempt",
        "oracle": "recon.pipeline.kinds.render",
        "capture": "recon.pipeline.kinds.render",
        "probe": "recon.pipeline.kinds.probe",
        "grade": "recon.pipeline.kinds.grade",
        "aggregate": "recon.pipeline.kinds.release",
        "site": "recon.pipeline.kinds.site",
        "manifest": "recon.pipeline.kinds.manifest",
    },
    "code_free": frozenset({"attempt"}),
    "format": dict.fromkeys(TODAY, 2),
    "checked": (
        "evidence",
        "workspace",
        "oracle",
        "capture",
        "probe",
        "grade",
        "aggregate",
        "site",
        "manifest",
    ),
    "long": frozenset({"attempt", "oracle", "capture", "probe", "grade"}),
    "browser": frozenset({"oracle", "capture", "probe"}),
    "attempt_scope": frozenset({"attempt", "capture", "probe", "grade"}),
    "case_scope": frozenset({"evidence", "workspace", "oracle", "capture", "probe"}),
    "release_scope": frozenset({"image", "aggregate", "site", "manifest"}),
    "critical": (
        ("attempt",),
        ("capture", "probe"),
        ("grade",),
        ("aggregate",),
        ("site",),
        ("manifest",),
    ),
    "withheld": ("grade", "oracle", "probe"),
    "run_metadata": {"attempt": ("run", "gateway")},
    "build_only": {"attempt": ("build",)},
}


def current() -> dict[str, Any]:
    """Every subset as the code holds it now, restricted to today's kinds."""
    from recon.model import kinds as k

    return {
        "kinds": get_args(k.CellKind),
        "modules": k.KIND_MODULES,
        "code_free": k.CODE_FREE,
        "format": k.CELL_FORMAT,
        "checked": k.CHECKED_KINDS,
        "long": k.LONG_KINDS,
        "browser": k.BROWSER_KINDS,
        "attempt_scope": k.ATTEMPT_KINDS,
        "case_scope": k.CASE_KINDS,
        "release_scope": k.RELEASE_KINDS,
        "critical": k.CRITICAL,
        "withheld": k.WITHHELD,
        "run_metadata": k.RUN_METADATA,
        "build_only": k.BUILD_ONLY,
    }


def today(value: Any) -> Any:
    """``value`` with only today's kinds: a new kind may join any subset."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if k in TODAY}
    if isinstance(value, (set, frozenset)):
        return frozenset(k for k in value if k in TODAY)
    if value and isinstance(value[0], tuple):
        return tuple(step for step in (tuple(k for k in s if k in TODAY) for s in value) if step)
    return tuple(k for k in value if k in TODAY)


def test_every_subset_keeps_todays_kinds_in_todays_order() -> None:
    found = current()
    assert found.keys() == PINNED.keys()
    wrong = {}
    for name, pinned in PINNED.items():
        value = today(found[name])
        if isinstance(pinned, frozenset):
            value = frozenset(value)
        elif isinstance(pinned, dict):
            value, pinned = list(value.items()), list(pinned.items())
        if value != pinned:
            wrong[name] = (value, pinned)
    assert wrong == {}, "subset: (found, pinned)"


def test_every_kind_has_one_record_in_dag_order_and_no_record_is_not_a_kind() -> None:
    assert tuple(KINDS) == get_args(CellKind)


FACETS = [f.name for f in dataclasses.fields(KindFacets)]


def test_a_record_that_lacks_any_facet_does_not_load() -> None:
    whole = dataclasses.asdict(KINDS["capture"])
    assert KindFacets(**whole) == KINDS["capture"]
    for facet in FACETS:  # no facet has a default to fall back on
        with pytest.raises(TypeError, match=facet):
            KindFacets(**{name: v for name, v in whole.items() if name != facet})


def _names(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, str) and v for v in value)


WELL_FORMED = {  # every other facet is a flag
    "module": lambda v: isinstance(v, str) and v.startswith("recon.pipeline.kinds."),
    "scopes": lambda v: _names(v) and v and set(v) <= set(get_args(Scope)),
    "critical": lambda v: v is None or (type(v) is int and v >= 0),
    "run_metadata": _names,
    "build_only": _names,
    "format": lambda v: type(v) is int and v >= 1,
}


def test_every_facet_of_every_record_is_well_formed() -> None:
    wrong = [
        (kind, facet, getattr(facets, facet))
        for kind, facets in KINDS.items()
        for facet in FACETS
        if not WELL_FORMED.get(facet, lambda v: type(v) is bool)(getattr(facets, facet))
    ]
    assert wrong == []


def test_every_kind_module_defines_the_kind_and_browser_kinds_ship_to_workers() -> None:
    lacking = []
    for kind, facets in KINDS.items():
        path = PACKAGE / (facets.module.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        if kind not in functions:
            lacking.append((kind, facets.module))
    assert lacking == []
    # a Ray task asks for a browser only when the kind leaves the coordinator at all
    assert BROWSER_KINDS <= LONG_KINDS
