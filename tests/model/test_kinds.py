"""The cell kinds and every subset of them (issue 26, item 1).

Fast: imports only. The membership of every subset is pinned for today's eleven kinds, so a
refactor of where the subsets come from cannot move a kind in or out of one.
"""

from __future__ import annotations

from typing import Any, get_args

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
    from recon.model.records import CellKind
    from recon.pipeline.check import CHECKED_KINDS
    from recon.pipeline.executor import LONG_KINDS
    from recon.pipeline.graph import BUILD_ONLY
    from recon.pipeline.keys import CELL_FORMAT, CODE_FREE, KIND_MODULES
    from recon.pipeline.kinds._base import RUN_METADATA
    from recon.pipeline.plan import ATTEMPT_KINDS, CRITICAL, RELEASE_KINDS
    from recon.pipeline.raycluster import RENDER_KINDS
    from recon.pipeline.tasks import BROWSER_KINDS
    from recon.release.explain import CASE_LEVEL, PER_ATTEMPT
    from recon.site.data import WITHHELD

    assert set(RENDER_KINDS) == set(BROWSER_KINDS)  # one set, two names
    assert set(ATTEMPT_KINDS) == set(PER_ATTEMPT)
    return {
        "kinds": get_args(CellKind),
        "modules": KIND_MODULES,
        "code_free": CODE_FREE,
        "format": CELL_FORMAT,
        "checked": CHECKED_KINDS,
        "long": LONG_KINDS,
        "browser": BROWSER_KINDS,
        "attempt_scope": ATTEMPT_KINDS,
        "case_scope": CASE_LEVEL,
        "release_scope": RELEASE_KINDS,
        "critical": CRITICAL,
        "withheld": WITHHELD,
        "run_metadata": RUN_METADATA,
        "build_only": BUILD_ONLY,
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
