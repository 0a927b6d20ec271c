"""Withdrawals (DESIGN §7): sidecars in the store and a committed file per release.

A :class:`Sidecar` is immutable: ``recon attempt withdraw`` and ``recon attempt restore``
each store one (who, when, why, the digest of the attempt record), and the aggregate cell
stores one for each attempt it withdraws automatically (its run conditions differ from
the release's; ``by`` is ``recon`` and ``at`` is empty, so the cell stays deterministic).
``releases/<id>.withdrawals.json`` (:class:`Withdrawals`) lists the active manual
withdrawals of a release and every sidecar ever written for it, in order.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from recon.model.base import Strict, Versioned
from recon.model.case import Digest
from recon.model.values import Id

Reason = str


class Sidecar(Versioned):
    action: Literal["withdraw", "restore"]
    release: Id
    attempt: str = Field(max_length=300)
    record: Digest  # the attempt record it is about
    reason: Reason = Field(min_length=1, max_length=2000)
    by: str = Field(min_length=1, max_length=200)
    at: str | None = None  # UTC, ISO 8601; None for an automatic withdrawal
    automatic: bool = False
    mismatch: list[str] = Field(default_factory=list)  # automatic: each differing condition
    restores: Digest | None = None  # restore: the withdraw sidecar it undoes

    @model_validator(mode="after")
    def _restore_names_its_withdrawal(self) -> Sidecar:
        if (self.action == "restore") != (self.restores is not None):
            raise ValueError(
                "restores: a restore names the withdraw sidecar it undoes, and only it"
            )
        return self


class Active(Strict):
    """One manual withdrawal in force."""

    attempt: str = Field(max_length=300)
    record: Digest
    sidecar: Digest
    reason: Reason = Field(min_length=1, max_length=2000)
    by: str = Field(min_length=1, max_length=200)
    at: str


class Withdrawals(Versioned):
    """releases/<id>.withdrawals.json, written by ``recon attempt withdraw|restore``."""

    release: Id
    active: list[Active] = Field(default_factory=list, max_length=100_000)
    log: list[Digest] = Field(default_factory=list, max_length=100_000)

    @model_validator(mode="after")
    def _once_each(self) -> Withdrawals:
        ids = [a.attempt for a in self.active]
        twice = sorted({i for i in ids if ids.count(i) > 1})
        if twice:
            raise ValueError(f"active: {twice[0]!r} withdrawn twice; keep one")
        return self
