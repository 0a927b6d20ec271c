"""Canonical JSON: the one byte form of anything that is hashed."""

from __future__ import annotations

import json
from typing import Any

import blake3


def canonical_json(value: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8, shortest round-trip floats, no NaN."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def digest_bytes(data: bytes) -> str:
    """blake3 hex digest of bytes."""
    return blake3.blake3(data).hexdigest()


def digest_json(value: Any) -> str:
    """blake3 hex digest of the canonical JSON of a value."""
    return digest_bytes(canonical_json(value))
