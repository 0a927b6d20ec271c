"""Usage from each vendor API's own fields, streamed and not, in one vocabulary."""

from __future__ import annotations

import json

from recon.gateway.usage import from_body, from_events
from recon.model.gateway import Usage
from tests.gateway import payloads as p


def test_anthropic_message_keeps_the_cache_apart() -> None:
    usage = from_body("anthropic", p.ANTHROPIC_MESSAGE)
    assert usage == Usage(input=12, output=6, cache_read=4096, cache_write=2048)
    assert usage is not None and usage.tokens == 12 + 6 + 4096 + 2048


def test_anthropic_stream_opens_with_message_start_and_message_delta_updates_it() -> None:
    usage = from_events("anthropic", p.ANTHROPIC_STREAM)
    assert usage == Usage(input=25, output=15, cache_read=300, cache_write=10)


def test_anthropic_delta_counts_are_cumulative_and_override() -> None:
    stream = p.events(
        ("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 5}}}),
        (
            "message_delta",
            {"type": "message_delta", "usage": {"input_tokens": 7, "output_tokens": 3}},
        ),
        ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 9}}),
    )
    assert from_events("anthropic", stream) == Usage(input=7, output=9)


def test_responses_input_includes_cached_and_output_includes_reasoning() -> None:
    expected = Usage(input=200, output=52, cache_read=128, reasoning=32)
    assert from_body("responses", p.RESPONSES_BODY) == expected
    assert from_events("responses", p.RESPONSES_STREAM) == expected


def test_chat_body_and_the_final_usage_chunk() -> None:
    assert from_body("chat", p.CHAT_BODY) == Usage(input=93, output=46, cache_read=1024)
    assert from_events("chat", p.CHAT_STREAM) == Usage(
        input=700, output=120, cache_read=200, reasoning=64
    )


def test_gemini_thoughts_are_billed_as_output_and_the_last_chunk_holds_totals() -> None:
    assert from_body("gemini", p.GEMINI_BODY) == Usage(
        input=200, output=100, cache_read=1000, reasoning=70
    )
    assert from_events("gemini", p.GEMINI_STREAM) == Usage(input=40, output=20, reasoning=11)


def test_no_usage_is_none_not_zero() -> None:
    assert from_body("chat", {"choices": []}) is None
    assert from_body("anthropic", "not json") is None
    assert from_events("chat", p.CHAT_STREAM[:-2]) is None
    assert from_events("responses", p.RESPONSES_STREAM[:-1]) is None


def test_junk_counts_are_not_counted() -> None:
    body = {"usage": {"input_tokens": "12", "output_tokens": -3, "cache_read_input_tokens": True}}
    assert from_body("anthropic", body) == Usage()


def test_gemini_stream_without_sse_is_a_json_array_of_chunks() -> None:
    chunks = [json.loads(e.data) for e in p.GEMINI_STREAM]
    assert from_body("gemini", chunks) == Usage(input=40, output=20, reasoning=11)
