"""``recon attempt withdraw`` and ``recon attempt restore``: an immutable sidecar into the
store (who, when, why, the digest of the attempt record), and the release's withdrawals
file (:mod:`recon.release.withdrawals`) updated: the active list and the log of every
sidecar. Rebuilding the release (``doit release:<id>``) re-aggregates it.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path

from recon.errors import ConfigError
from recon.model import Active, AttemptRecord, Pointer, ReleaseDef, Sidecar, Withdrawals
from recon.release.withdrawals import load, path_of
from recon.store import Store, StoreLayout, write_atomic


@dataclass(frozen=True)
class Request:
    """One withdraw or restore: the project, the attempt, why, who, and (when several
    releases hold the attempt) which release."""

    root: Path
    store: Store  # the project's (recon.project.Project.store)
    releases: dict[str, ReleaseDef]
    attempt: str
    reason: str
    by: str
    release: str | None = None


@dataclass(frozen=True)
class Done:
    release: str
    sidecar: str
    path: Path


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def release_of(releases: dict[str, ReleaseDef], attempt: str, wanted: str | None) -> str:
    """The release holding attempt id ``attempt`` (``wanted``, when several hold it)."""
    holding = sorted(rid for rid, rel in releases.items() if attempt in rel.attempt_names())
    if wanted is not None:
        if wanted not in releases:
            known = ", ".join(sorted(releases)) or "none"
            raise ConfigError(f"--release {wanted}: no such release (known: {known})")
        if wanted not in holding:
            raise ConfigError(f"{attempt}: not an attempt of release {wanted!r}; check the id")
        return wanted
    if not holding:
        raise ConfigError(
            f"{attempt}: unknown attempt (attempt ids read <protocol>.<entry>.<case>.<index>, "
            "like the files under store/cells/attempt/); check the id"
        )
    if len(holding) > 1:
        raise ConfigError(f"{attempt}: in releases {', '.join(holding)}; name one with --release")
    return holding[0]


def _record(store: Store, attempt: str) -> str:
    """The digest of the attempt's record, from its pointer."""
    pointer_path = StoreLayout(store.root).pointer("attempt", attempt)
    try:
        pointer = Pointer.model_validate(json.loads(pointer_path.read_bytes()))
        digest = pointer.outputs["record"].digest
    except (OSError, ValueError, KeyError):
        raise ConfigError(
            f"{attempt}: no record yet ({pointer_path} missing or unreadable); "
            "build the release with `doit release:<id>` first"
        ) from None
    AttemptRecord.model_validate(store.read_json(digest))
    return digest


def _write(root: Path, withdrawals: Withdrawals) -> Path:
    path = path_of(root, withdrawals.release)
    text = json.dumps(withdrawals.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    write_atomic(path, text.encode())
    return path


def withdraw(req: Request) -> Done:
    rid = release_of(req.releases, req.attempt, req.release)
    current = load(req.root, rid)
    if any(a.attempt == req.attempt for a in current.active):
        raise ConfigError(f"{req.attempt}: already withdrawn from {rid}; restore it first")
    record = _record(req.store, req.attempt)
    sidecar = Sidecar(action="withdraw", release=rid, attempt=req.attempt, record=record,
                      reason=req.reason, by=req.by, at=_now())  # fmt: skip
    digest = req.store.put_json(sidecar.model_dump(mode="json"))
    entry = Active(attempt=req.attempt, record=record, sidecar=digest, reason=req.reason,
                   by=req.by, at=sidecar.at or "")  # fmt: skip
    updated = Withdrawals(release=rid, active=[*current.active, entry], log=[*current.log, digest])
    return Done(rid, digest, _write(req.root, updated))


def restore(req: Request) -> Done:
    rid = release_of(req.releases, req.attempt, req.release)
    current = load(req.root, rid)
    found = next((a for a in current.active if a.attempt == req.attempt), None)
    if found is None:
        raise ConfigError(
            f"{req.attempt}: not withdrawn by hand from {rid} ({path_of(req.root, rid).name}); "
            "an automatic withdrawal ends when the attempt runs again under the release's "
            "conditions"
        )
    sidecar = Sidecar(action="restore", release=rid, attempt=req.attempt, record=found.record,
                      reason=req.reason, by=req.by, at=_now(), restores=found.sidecar)  # fmt: skip
    digest = req.store.put_json(sidecar.model_dump(mode="json"))
    active = [a for a in current.active if a.attempt != req.attempt]
    updated = Withdrawals(release=rid, active=active, log=[*current.log, digest])
    return Done(rid, digest, _write(req.root, updated))
