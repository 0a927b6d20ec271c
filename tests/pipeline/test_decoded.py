"""Grade cells share decoded stills within a process (recon.pipeline.kinds.grade.decoded):
a second read of a digest decodes nothing, the arrays are read-only, and the cache keeps
within its byte budget, oldest out first."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from recon.pipeline.kinds import grade
from recon.store import Store


def png(colour: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


def test_a_still_is_decoded_once_read_only_and_the_cache_keeps_its_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "store")
    monkeypatch.setattr(grade, "_decoded", type(grade._decoded)())
    red, blue, broken = (store.put_bytes(b) for b in (png((255, 0, 0)), png((0, 0, 255)), b"x"))
    reads: list[str] = []
    real = store.read_bytes

    def counted(digest: str) -> bytes:
        reads.append(digest)
        return real(digest)

    monkeypatch.setattr(store, "read_bytes", counted)

    first = grade.decoded(store, red)
    assert first is not None and first.shape == (30, 40, 3) and tuple(first[0, 0]) == (255, 0, 0)
    assert grade.decoded(store, red) is first and reads == [red]
    assert not first.flags.writeable
    with pytest.raises(ValueError):
        first[0, 0] = 0
    assert grade.decoded(store, broken) is None and grade.decoded(store, broken) is None
    assert reads == [red, broken]

    monkeypatch.setattr(grade, "DECODED_BYTES", first.nbytes)  # room for one still
    second = grade.decoded(store, blue)
    assert second is not None and np.array_equal(second[0, 0], [0, 0, 255])
    assert red not in grade._decoded and blue in grade._decoded
    grade.decoded(store, red)
    assert reads == [red, broken, blue, red]
