"""Scripted entries that submit a fixed build tree, for real doit builds in tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from recon.curate.ladder_run import COPY_AGENT
from recon.store import Store


def copy_entry(project: Path, entry_id: str, tree: dict[str, bytes]) -> str:
    """A native scripted entry (``entries/<entry_id>.yaml``) whose agent copies ``tree``
    into the workspace's build output."""
    template = yaml.safe_load((project / "entries" / "scripted-starter.yaml").read_text())
    (project / "entries" / "scripted" / "copy_tree.py").write_text(COPY_AGENT)
    rel = Path("scripted") / "trees" / entry_id
    for path, data in tree.items():
        dest = project / "entries" / rel / path
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    entry = dict(template, id=entry_id)
    entry["model"] = dict(template["model"], name=entry_id)
    entry["agent"] = dict(
        template["agent"],
        command=[
            "{python}",
            "{entry_dir}/scripted/copy_tree.py",
            f"{{entry_dir}}/{rel}",
            "{workspace}",
        ],
        files=["scripted/copy_tree.py", *sorted(f"{rel}/{p}" for p in tree)],
    )
    (project / "entries" / f"{entry_id}.yaml").write_text(yaml.safe_dump(entry))
    return entry_id


def write_release(project: Path, release_id: str, case: str, entries: list[str]) -> str:
    """A release like ``demo`` of one case and ``entries``, one attempt each."""
    release = yaml.safe_load((project / "releases" / "demo.yaml").read_text())
    release.update(id=release_id, cases=[case], entries=entries)
    release["protocol"] = dict(release["protocol"], name=release_id, repeats=1)
    (project / "releases" / f"{release_id}.yaml").write_text(yaml.safe_dump(release))
    return release_id


def grade_table(project: Path, protocol: str, entry: str, case: str) -> dict[str, Any]:
    """The grade table of the entry's first attempt on ``case``."""
    pointer = project / "store" / "cells" / "grade" / f"{protocol}.{entry}.{case}.0.json"
    outputs = json.loads(pointer.read_text())["outputs"]
    table: dict[str, Any] = Store(project / "store").read_json(outputs["grade"]["digest"])
    return table
