"""releases/<id>.lock: a frozen release (``recon release freeze``), in the spirit of
``dvc.lock`` and Terminal-Bench's ``tb.lock``.

It records the manifest of the release as frozen and every input digest it was built
from (:meth:`recon.model.ManifestInputs.flat`). A build whose inputs differ is refused; a
re-grade on purpose (``doit release:<id> regrade=<id>``) builds a new manifest version
and appends it to ``history``.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from recon.model.base import Strict, Versioned
from recon.model.case import Digest
from recon.model.values import Id


class LockVersion(Strict):
    version: int = Field(ge=1)
    manifest: Digest  # the manifest blob in the store
    release_json: Digest
    changed: list[str] = Field(default_factory=list)  # inputs changed from the version before


class ReleaseLock(Versioned):
    release: Id
    version: int = Field(ge=1)
    manifest: Digest
    inputs: dict[str, str]
    history: list[LockVersion] = Field(min_length=1)

    @model_validator(mode="after")
    def _history_ends_here(self) -> ReleaseLock:
        last = self.history[-1]
        if (last.version, last.manifest) != (self.version, self.manifest):
            raise ValueError(
                "history: its last version must be the locked one; rewrite the lock with "
                "`recon release freeze`"
            )
        return self

    def at(self, version: int) -> LockVersion | None:
        return next((v for v in self.history if v.version == version), None)
