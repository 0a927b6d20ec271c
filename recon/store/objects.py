"""Content-addressed blobs: ``{root}/objects/{digest[:2]}/{digest}``, read-only once written."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import blake3

from recon.errors import StoreError
from recon.store.atomic import _fsync_dir
from recon.store.canonical import canonical_json
from recon.store.disk import space_for
from recon.store.layout import StoreLayout

CHUNK = 1 << 20


class ObjectFault(StoreError):
    """An object a reader needed is missing or does not hash to its name."""

    def __init__(self, digest: str, message: str) -> None:
        super().__init__(message)
        self.digest = digest


class MissingObject(ObjectFault):
    pass


class CorruptObject(ObjectFault):
    """The object's bytes did not hash to its digest; it has been quarantined."""


def hash_file(path: Path | str) -> str:
    """blake3 hex digest of a file's bytes, streamed."""
    hasher = blake3.blake3()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            hasher.update(chunk)
    return hasher.hexdigest()


class Store:
    """The content-addressed store rooted at ``root``.

    Every read is verified: the bytes are hashed as they are read and compared with the
    digest that names them (``verify=False`` exists only to measure what that costs). A
    mismatch moves the object to ``quarantine/`` and raises :class:`CorruptObject`; an
    absent object raises :class:`MissingObject`. Whoever runs cells heals both (DESIGN §4).
    """

    def __init__(self, root: Path, *, verify: bool = True) -> None:
        self.root = Path(root)
        self.objects = StoreLayout(self.root).objects
        self.quarantine_dir = StoreLayout(self.root).quarantine
        self.verify = verify

    def path(self, digest: str) -> Path:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise StoreError(f"not a blake3 digest: {digest!r}")
        return self.objects / digest[:2] / digest

    def has(self, digest: str) -> bool:
        return self.path(digest).is_file()

    def size(self, digest: str) -> int:
        return self.path(digest).stat().st_size

    def put_bytes(self, data: bytes) -> str:
        digest = blake3.blake3(data).hexdigest()
        if not self.has(digest):
            self._install(digest, lambda handle: handle.write(data))
        return digest

    def put_json(self, value: Any) -> str:
        return self.put_bytes(canonical_json(value))

    def put_file(self, source: Path) -> str:
        """Copy a file in, hashing while copying; the digest names the object."""
        hasher = blake3.blake3()
        with space_for(self.objects):
            self.objects.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.objects, prefix=".tmp-")
        try:
            with space_for(self.objects), os.fdopen(fd, "wb") as out, open(source, "rb") as src:
                while chunk := src.read(CHUNK):
                    hasher.update(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            digest = hasher.hexdigest()
            with space_for(self.objects):
                self._place(tmp, digest)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return digest

    def read_bytes(self, digest: str) -> bytes:
        """The object's bytes, checked against ``digest`` (see the class docstring)."""
        try:
            data = self.path(digest).read_bytes()
        except FileNotFoundError:
            raise self._missing(digest) from None
        if self.verify and blake3.blake3(data).hexdigest() != digest:
            raise self._corrupt(digest)
        return data

    def read_json(self, digest: str) -> Any:
        data = self.read_bytes(digest)
        try:
            return json.loads(data)
        except ValueError:
            raise StoreError(f"store object {digest} is not JSON") from None

    def copy_out(self, digest: str, dest: Path, *, mode: int = 0o644) -> None:
        """Copy an object to ``dest``, hashing while copying; a mismatch removes ``dest``."""
        dest.parent.mkdir(parents=True, exist_ok=True)
        hasher = blake3.blake3()
        try:
            with open(self.path(digest), "rb") as src, open(dest, "wb") as out:
                while chunk := src.read(CHUNK):
                    hasher.update(chunk)
                    out.write(chunk)
        except FileNotFoundError as err:
            if err.filename == str(self.path(digest)):
                raise self._missing(digest) from None
            raise
        if self.verify and hasher.hexdigest() != digest:
            dest.unlink()
            raise self._corrupt(digest)
        os.chmod(dest, mode)

    def check(self, digest: str) -> None:
        """Verify one object without keeping its bytes (raises like :meth:`read_bytes`)."""
        try:
            actual = hash_file(self.path(digest))
        except FileNotFoundError:
            raise self._missing(digest) from None
        if actual != digest:
            raise self._corrupt(digest)

    def quarantine(self, digest: str) -> Path | None:
        """Move an object out of ``objects/`` (atomic rename); its new path, or None."""
        source = self.path(digest)
        self.quarantine_dir.mkdir(parents=True, exist_ok=True)
        fd, target = tempfile.mkstemp(dir=self.quarantine_dir, prefix=f"{digest}.")
        os.close(fd)
        try:
            os.replace(source, target)
        except FileNotFoundError:
            os.unlink(target)
            return None
        return Path(target)

    def _missing(self, digest: str) -> MissingObject:
        return MissingObject(
            digest,
            f"store object {digest} is missing from {self.objects}; "
            "rebuild the release (it re-runs the cell that made it) or run "
            "`recon store verify --repair`",
        )

    def _corrupt(self, digest: str) -> CorruptObject:
        moved = self.quarantine(digest)
        where = f"; moved to {moved}" if moved else ""
        return CorruptObject(
            digest,
            f"store object {digest} does not hash to its name{where}; "
            "rebuild the release (it re-runs the cell that made it)",
        )

    def iter_digests(self) -> Iterator[str]:
        if not self.objects.is_dir():
            return
        for shard in sorted(self.objects.iterdir()):
            if shard.is_dir() and len(shard.name) == 2:
                for obj in sorted(shard.iterdir()):
                    if not obj.name.startswith("."):
                        yield obj.name

    def _install(self, digest: str, write: Any) -> None:
        with space_for(self.objects):
            self.objects.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.objects, prefix=".tmp-")
        try:
            with space_for(self.objects), os.fdopen(fd, "wb") as handle:
                write(handle)
                handle.flush()
                os.fsync(handle.fileno())
            with space_for(self.objects):
                self._place(tmp, digest)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def _place(self, tmp: str, digest: str) -> None:
        final = self.path(digest)
        if final.exists():
            return
        final.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(tmp, 0o444)
        os.replace(tmp, final)
        _fsync_dir(final.parent)
