"""Content-addressed blobs: ``{root}/objects/{digest[:2]}/{digest}``, read-only once written."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import blake3

from recon.errors import StoreError
from recon.store.atomic import _fsync_dir
from recon.store.canonical import canonical_json

CHUNK = 1 << 20


def hash_file(path: Path | str) -> str:
    """blake3 hex digest of a file's bytes, streamed."""
    hasher = blake3.blake3()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            hasher.update(chunk)
    return hasher.hexdigest()


class Store:
    """The content-addressed store rooted at ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.objects = self.root / "objects"

    def path(self, digest: str) -> Path:
        if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
            raise StoreError(f"not a blake3 digest: {digest!r}")
        return self.objects / digest[:2] / digest

    def has(self, digest: str) -> bool:
        return self.path(digest).is_file()

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
        self.objects.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.objects, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out, open(source, "rb") as src:
                while chunk := src.read(CHUNK):
                    hasher.update(chunk)
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            digest = hasher.hexdigest()
            self._place(tmp, digest)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return digest

    def read_bytes(self, digest: str) -> bytes:
        try:
            return self.path(digest).read_bytes()
        except FileNotFoundError:
            raise StoreError(
                f"store object {digest} is missing from {self.objects}: "
                "rebuild the release or run `recon store verify`"
            ) from None

    def read_json(self, digest: str) -> Any:
        return json.loads(self.read_bytes(digest))

    def copy_out(self, digest: str, dest: Path, *, mode: int = 0o644) -> None:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(self.path(digest), dest)
        os.chmod(dest, mode)

    def iter_digests(self) -> Iterator[str]:
        if not self.objects.is_dir():
            return
        for shard in sorted(self.objects.iterdir()):
            if shard.is_dir() and len(shard.name) == 2:
                for obj in sorted(shard.iterdir()):
                    if not obj.name.startswith("."):
                        yield obj.name

    def _install(self, digest: str, write: Any) -> None:
        self.objects.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.objects, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                write(handle)
                handle.flush()
                os.fsync(handle.fileno())
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
