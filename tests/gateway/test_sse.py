"""Server-sent events are parsed across any chunking and encoded one way."""

from __future__ import annotations

from recon.gateway.sse import SseParser, encode
from recon.model.gateway import SseEvent

WIRE = b'event: message_start\r\ndata: {"a":\r\n\r\n: keep-alive\n\ndata:[DONE]\n\ndata: tail'


def test_events_survive_any_chunking() -> None:
    expected = [
        SseEvent(event="message_start", data='{"a":'),
        SseEvent(data="[DONE]"),
        SseEvent(data="tail"),
    ]
    for size in (1, 2, 7, len(WIRE)):
        parser = SseParser()
        got = [e for i in range(0, len(WIRE), size) for e in parser.feed(WIRE[i : i + size])]
        assert [*got, *parser.close()] == expected


def test_encode_round_trips_multiline_data() -> None:
    event = SseEvent(event="x", data="one\ntwo")
    assert encode(event) == b"event: x\ndata: one\ndata: two\n\n"
    assert SseParser().feed(encode(event)) == [event]
