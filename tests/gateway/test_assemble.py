"""A streamed response assembles to the message the same API returns unstreamed."""

from __future__ import annotations

from recon.gateway.assemble import assemble
from tests.gateway import payloads as p


def test_anthropic_text_and_tool_input_are_joined() -> None:
    message = assemble("anthropic", p.ANTHROPIC_STREAM)
    assert message["content"] == [
        {"type": "text", "text": "Hi!"},
        {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {"command": "ls"}},
    ]
    assert message["stop_reason"] == "tool_use"
    assert message["usage"]["output_tokens"] == 15


def test_responses_is_the_completed_response() -> None:
    assert assemble("responses", p.RESPONSES_STREAM) == p.RESPONSES_BODY


def test_chat_joins_content_and_tool_call_arguments() -> None:
    completion = assemble("chat", p.CHAT_STREAM)
    (choice,) = completion["choices"]
    assert choice["message"]["content"] == "Hello"
    assert choice["message"]["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "bash", "arguments": '{"cmd": "ls"}'},
        }
    ]
    assert choice["finish_reason"] == "tool_calls"
    assert completion["usage"]["completion_tokens"] == 120


def test_gemini_joins_text_parts_and_keeps_the_last_usage() -> None:
    response = assemble("gemini", p.GEMINI_STREAM)
    assert response["candidates"][0]["content"]["parts"] == [{"text": "Hello"}]
    assert response["candidates"][0]["finishReason"] == "STOP"
    assert response["usageMetadata"]["totalTokenCount"] == 60


def test_nothing_assembles_to_none() -> None:
    assert assemble("anthropic", []) is None
    assert assemble("chat", []) is None
