"""recon.gateway.turns: a reply's text and tool calls, and a request's tool results, read
alike in every protocol."""

from __future__ import annotations

from typing import Any

import pytest

from recon.gateway.turns import ToolCall, ToolResult, answered, reply, results
from recon.model.gateway import Protocol

REPLIES: dict[Protocol, Any] = {
    "anthropic": {"content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "tu_1", "name": "bash", "input": {"cmd": "ls"}},
    ]},
    "responses": {"output": [
        {"type": "reasoning", "summary": []},
        {"type": "message", "content": [{"type": "output_text", "text": "Let me look."}]},
        {"type": "function_call", "call_id": "tu_1", "name": "bash", "arguments": '{"cmd": "ls"}'},
    ]},
    "chat": {"choices": [{"message": {"role": "assistant", "content": "Let me look.",
        "tool_calls": [{"id": "tu_1",
                        "function": {"name": "bash", "arguments": '{"cmd": "ls"}'}}]}}]},
    "gemini": {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "thinking", "thought": True}, {"text": "Let me look."},
        {"functionCall": {"name": "bash", "args": {"cmd": "ls"}}},
    ]}}]},
}  # fmt: skip

REQUESTS: dict[Protocol, Any] = {
    "anthropic": {"messages": [
        {"role": "user", "content": "task"},
        {"role": "assistant",
         "content": [{"type": "tool_result", "tool_use_id": "old", "content": "x"}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1",
                                      "content": [{"type": "text", "text": "a.txt"}]}]},
    ]},
    "responses": {"input": [
        {"role": "user", "content": "task"},
        {"type": "function_call_output", "call_id": "old", "output": "x"},
        {"type": "function_call", "call_id": "tu_1", "name": "bash", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "tu_1", "output": "a.txt"},
    ]},
    "chat": {"messages": [
        {"role": "user", "content": "task"},
        {"role": "tool", "tool_call_id": "old", "content": "x"},
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "tool", "tool_call_id": "tu_1", "content": "a.txt"},
    ]},
    "gemini": {"contents": [
        {"role": "user", "parts": [{"functionResponse": {"name": "bash", "response": "old"}}]},
        {"role": "model", "parts": [{"functionCall": {"name": "bash", "args": {}}}]},
        {"role": "user",
         "parts": [{"functionResponse": {"name": "bash", "response": {"out": "a.txt"}}}]},
    ]},
}  # fmt: skip


@pytest.mark.parametrize("protocol", list(REPLIES))
def test_a_reply_reads_alike_in_every_protocol(protocol: Protocol) -> None:
    said = reply(protocol, REPLIES[protocol])
    assert said.text == "Let me look."  # a Gemini thought is not the model's text
    ((call,),) = [said.calls]
    assert call.name == "bash"
    assert call.arguments.replace(" ", "") == '{"cmd":"ls"}'
    assert call.id == (None if protocol == "gemini" else "tu_1")


@pytest.mark.parametrize("protocol", list(REQUESTS))
def test_only_the_results_after_the_last_reply_are_this_turns(protocol: Protocol) -> None:
    (found,) = results(protocol, REQUESTS[protocol])
    assert "a.txt" in found.content and found.content != "x"
    assert found.id == (None if protocol == "gemini" else "tu_1")


def test_results_answer_calls_by_id_or_else_by_position() -> None:
    calls = (ToolCall("b", "x", ""), ToolCall("a", "y", ""), ToolCall(None, "z", ""))
    found = [ToolResult("a", "A"), ToolResult(None, "first anonymous"), ToolResult("b", "B")]
    assert answered(calls, found) == ["B", "A", "first anonymous"]
    assert answered(calls, []) == [None, None, None]


@pytest.mark.parametrize("message", [None, "text", [], {"content": "no list"}, {"choices": [1]}])
def test_shapes_it_does_not_know_read_as_nothing(message: Any) -> None:
    for protocol in REPLIES:
        assert reply(protocol, message).calls == ()
        assert results(protocol, message) == []
