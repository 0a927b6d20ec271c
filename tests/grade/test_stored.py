"""Grade cells share decoded stills within a process (recon.grade.stored.decoded):
a second read of a digest decodes nothing, the arrays are read-only, and the cache keeps
within its byte budget, oldest out first."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from recon.grade import stored
from recon.store import Store


def png(colour: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


def test_a_still_is_decoded_once_read_only_and_the_cache_keeps_its_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store")
    monkeypatch.setattr(stored, "_decoded", type(stored._decoded)())
    red, blue, broken = (store.put_bytes(b) for b in (png((255, 0, 0)), png((0, 0, 255)), b"x"))
    reads: list[str] = []
    real = store.read_bytes

    def counted(digest: str) -> bytes:
        reads.append(digest)
        return real(digest)

    monkeypatch.setattr(store, "read_bytes", counted)

    first = stored.decoded(store, red)
    assert first is not None and first.shape == (30, 40, 3) and tuple(first[0, 0]) == (255, 0, 0)
    assert stored.decoded(store, red) is first and reads == [red]
    assert not first.flags.writeable
    with pytest.raises(ValueError):
        first[0, 0] = 0
    assert stored.decoded(store, broken) is None and stored.decoded(store, broken) is None
    assert reads == [red, broken]

    monkeypatch.setattr(stored, "DECODED_BYTES", first.nbytes)  # room for one still
    second = stored.decoded(store, blue)
    assert second is not None and np.array_equal(second[0, 0], [0, 0, 255])
    assert red not in stored._decoded and blue in stored._decoded
    stored.decoded(store, red)
    assert reads == [red, broken, blue, red]
