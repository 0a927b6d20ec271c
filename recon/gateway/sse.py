"""Server-sent events: an incremental parser over received bytes, and one encoding back.

The gateway forwards every event as :func:`encode` writes it, live and in replay alike, so
what the agent receives is the same bytes either way. Comments (keep-alive ``:`` lines),
``id`` and ``retry`` fields are dropped: no vendor API gives them meaning for a call.
"""

from __future__ import annotations

from recon.model.gateway import SseEvent


class SseParser:
    """Feed it bytes as they arrive; it returns the events completed so far."""

    def __init__(self) -> None:
        self._buffer = b""
        self._cr = b""  # a chunk's last \r, which may open a \r\n the next one ends

    def feed(self, chunk: bytes) -> list[SseEvent]:
        data, self._cr = self._cr + chunk, b""
        if data.endswith(b"\r"):
            data, self._cr = data[:-1], b"\r"
        self._buffer += data.replace(b"\r\n", b"\n")
        events = []
        while (end := self._buffer.find(b"\n\n")) >= 0:
            block, self._buffer = self._buffer[:end], self._buffer[end + 2 :]
            event = parse_block(block.decode("utf-8", errors="replace"))
            if event is not None:
                events.append(event)
        return events

    def close(self) -> list[SseEvent]:
        """The last event, when the stream ended without its blank line."""
        rest, self._buffer, self._cr = self._buffer, b"", b""
        event = parse_block(rest.decode("utf-8", errors="replace")) if rest.strip() else None
        return [event] if event is not None else []


def parse_block(block: str) -> SseEvent | None:
    """One event from its lines; None for a block of comments only."""
    name: str | None = None
    data: list[str] = []
    for line in block.split("\n"):
        if not line or line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    if name is None and not data:
        return None
    return SseEvent(event=name, data="\n".join(data))


def encode(event: SseEvent) -> bytes:
    """The wire form of one event."""
    head = f"event: {event.event}\n" if event.event is not None else ""
    body = "".join(f"data: {line}\n" for line in event.data.split("\n"))
    return f"{head}{body}\n".encode()
