"""An exec's output, read from the engine without losing a byte.

The engine answers ``POST /exec/{id}/start`` by upgrading the connection and sending the
output as frames (an 8-byte header: stream id, three zero bytes, a big-endian length; then
that many bytes). docker-py's own reader takes the socket *underneath* the buffered file
that parsed the HTTP headers, so whatever output arrived together with the headers is lost
and the next "header" is read from the middle of the output ("58 is not a valid stream",
docker-py #3160): on a busy machine, where the harness is slow to read the answer, an
attempt became a harness failure. This reader reads the frames through that buffered file.
A header that is not one (an unknown stream id) raises ``StreamError``: never silently
garbled output.
"""

from __future__ import annotations

import contextlib
import struct
import threading
from collections.abc import Iterator
from typing import Any

STDOUT = 1
STDERR = 2
HEADER = struct.Struct(">BxxxL")
CHUNK = 65536


class StreamError(Exception):
    """The engine's exec stream is not the framing it should be."""


class ExecStream:
    """The output of one started exec; iterate ``frames()`` (or ``chunks()``) once."""

    def __init__(self, api: Any, exec_id: str) -> None:
        response = api._post_json(
            api._url("/exec/{0}/start", exec_id),
            headers={"Connection": "Upgrade", "Upgrade": "tcp"},
            data={"Tty": False, "Detach": False},
            stream=True,
        )
        api._raise_for_status(response)
        self._response = response
        self._file = response.raw._fp.fp  # buffered: holds output read with the headers
        api._disable_socket_timeout(self._file.raw)  # an agent may be quiet for minutes

    def frames(self) -> Iterator[tuple[int, bytes]]:
        """``(stream id, bytes)`` until the exec's output ends (then ``close()`` it)."""
        while header := self._read_exactly(HEADER.size):
            stream, size = HEADER.unpack(header)
            if stream not in (STDOUT, STDERR):
                raise StreamError(f"exec stream out of step: frame header {header!r}")
            while size > 0:
                data = self._file.read1(min(size, CHUNK))
                if not data:
                    return
                size -= len(data)
                yield stream, data

    def chunks(self) -> Iterator[bytes]:
        """The output, stdout and stderr as they come."""
        return (data for _, data in self.frames())

    def read_all(self, cap: int) -> tuple[bytes, bytes]:
        """All of stdout and stderr (each kept up to ``cap`` bytes); closes the stream."""
        kept: dict[int, bytearray] = {STDOUT: bytearray(), STDERR: bytearray()}
        try:
            for stream, data in self.frames():
                kept[stream] += data[: max(0, cap - len(kept[stream]))]
        finally:
            self.close()
        return bytes(kept[STDOUT]), bytes(kept[STDERR])

    def drain(self) -> None:
        """Read and discard the rest in the background, then close (a helper that keeps
        running must never block on a full pipe)."""
        threading.Thread(target=self._discard, name="recon-exec-drain", daemon=True).start()

    def close(self) -> None:
        self._response.close()

    def _discard(self) -> None:
        with contextlib.suppress(OSError, ValueError, StreamError):  # the container went away
            for _ in self.frames():
                pass
        self.close()

    def _read_exactly(self, size: int) -> bytes:
        data = b""
        while len(data) < size:
            more = self._file.read1(size - len(data))
            if not more:
                if data:
                    raise StreamError(f"exec stream cut inside a frame header ({data!r})")
                return b""
            data += more
        return data
