"""What every kind module shares: the shape of a cell's result and storing outputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from recon.model import Ref
from recon.model.captures import Skipped
from recon.store import Store


@dataclass
class Produced:
    """What a cell's compute function returns."""

    outputs: dict[str, Ref]
    retry: bool = False  # a harness failure: record nothing, run again next build
    timings: dict[str, float] = field(default_factory=dict)


def blob(store: Store, value: Any) -> Ref:
    """Store ``value`` as canonical JSON."""
    return Ref(digest=store.put_json(value), type="blob")


def tree(digest: str) -> Ref:
    return Ref(digest=digest, type="tree")


def skipped(store: Store, name: str, why: str) -> Produced:
    """The output of a cell with nothing to read (its attempt has no valid build)."""
    return Produced({name: blob(store, Skipped(skipped=why).model_dump(mode="json"))})


def is_skipped(value: Any) -> bool:
    return isinstance(value, dict) and "skipped" in value
