"""Evidence bundles and Candidate workspaces, composed as store trees.

The evidence bundle is the frozen public tree of a case (brief, evidence, starter,
contract). A workspace is the starter's files plus the brief, the contract and, under the
``full`` evidence condition, the evidence folder. Nothing sealed is ever an input here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recon.errors import ConfigError
from recon.store import Store, put_tree, read_tree
from recon.store.tree import put_tree_entries

PUBLIC_PARTS = ("brief.md", "contract.yaml", "evidence", "starter")


def freeze_evidence(store: Store, public: Path) -> str:
    """Store a case's public folder as the evidence bundle; its layout is checked first."""
    missing = [p for p in PUBLIC_PARTS if not (public / p).exists()]
    if missing:
        raise ConfigError(
            f"{public}: missing {', '.join(missing)}; a case's public/ needs {PUBLIC_PARTS}"
        )
    return put_tree(store, public)


def compose_workspace(store: Store, bundle: str, condition: str) -> str:
    """The Candidate workspace for one evidence condition, built from the bundle tree."""
    parts = {e["name"]: e for e in read_tree(store, bundle)}
    entries: list[dict[str, Any]] = list(read_tree(store, parts["starter"]["digest"]))
    names = {e["name"] for e in entries}
    wanted = ["brief.md", "contract.yaml"] + (["evidence"] if condition == "full" else [])
    for name in wanted:
        if name in names:
            raise ConfigError(
                f"starter/{name}: clashes with the {name} the harness adds; rename it"
            )
        entries.append(parts[name])
    return put_tree_entries(store, entries)
