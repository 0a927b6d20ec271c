"""What one exchange says, read alike in every protocol: the model's reply (its text and its
tool calls) and the tool results a request carries back.

A reply is the exchange's ``message`` (the body, or what the stream assembled to: one shape
per protocol, :mod:`recon.gateway.assemble`). Tool results are the request's trailing
items after the model's last reply: Anthropic ``tool_result`` blocks, Chat ``tool``
messages, Responses ``function_call_output`` items, Gemini ``functionResponse`` parts.
They name the call they answer by id; Gemini's carry no id, so they answer by position.
Pure functions: JSON in, plain data out; whatever shape they do not know reads as nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from recon.model.gateway import Protocol

_CALLS = frozenset({"function_call", "custom_tool_call", "reasoning"})
"""Responses input items that are (part of) a model's reply."""


@dataclass(frozen=True)
class ToolCall:
    id: str | None
    name: str
    arguments: str  # as the model wrote them (JSON text)


@dataclass(frozen=True)
class ToolResult:
    id: str | None
    content: str


@dataclass(frozen=True)
class Reply:
    text: str
    calls: tuple[ToolCall, ...]


def reply(protocol: Protocol, message: Any) -> Reply:
    """The text and the tool calls of a model's reply (empty when it is not one)."""
    if not isinstance(message, dict):
        return Reply("", ())
    if protocol == "anthropic":
        return _anthropic(_list(message.get("content")))
    if protocol == "responses":
        return _responses(_list(message.get("output")))
    if protocol == "chat":
        return _chat(_dict(_dict(_first(message.get("choices"))).get("message")))
    content = _dict(_dict(_first(message.get("candidates"))).get("content"))
    return _gemini(_list(content.get("parts")))


def results(protocol: Protocol, request: Any) -> list[ToolResult]:
    """The tool results a request sends back: those after the model's last reply."""
    if not isinstance(request, dict):
        return []
    if protocol == "anthropic":
        last = _trailing(_list(request.get("messages")), lambda m: m.get("role") == "assistant")
        blocks = [b for m in last for b in _list(m.get("content")) if isinstance(b, dict)]
        return [
            ToolResult(_str_or_none(b.get("tool_use_id")), text(b.get("content")))
            for b in blocks
            if b.get("type") == "tool_result"
        ]
    if protocol == "chat":
        last = _trailing(_list(request.get("messages")), lambda m: m.get("role") == "assistant")
        return [
            ToolResult(_str_or_none(m.get("tool_call_id")), text(m.get("content")))
            for m in last
            if m.get("role") == "tool"
        ]
    if protocol == "responses":
        items = _list(request.get("input"))
        last = _trailing(items, lambda i: i.get("role") == "assistant" or i.get("type") in _CALLS)
        return [
            ToolResult(_str_or_none(i.get("call_id")), text(i.get("output")))
            for i in last
            if i.get("type") == "function_call_output"
        ]
    last = _trailing(_list(request.get("contents")), lambda c: c.get("role") == "model")
    parts = [p for c in last for p in _list(c.get("parts")) if isinstance(p, dict)]
    answers = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
    return [ToolResult(None, _json_text(a.get("response"))) for a in answers]


def answered(calls: tuple[ToolCall, ...], found: list[ToolResult]) -> list[str | None]:
    """Each call's result (None: no result names it): by id, or by position without one."""
    by_id = {r.id: r.content for r in found if r.id is not None}
    anonymous = [r.content for r in found if r.id is None]
    out: list[str | None] = []
    for call in calls:
        if call.id is not None and call.id in by_id:
            out.append(by_id[call.id])
        else:
            out.append(anonymous.pop(0) if anonymous else None)
    return out


def text(content: Any) -> str:
    """Text of a string, or of a list of blocks or parts (``text``), nested or not."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        if isinstance(content.get("text"), str):
            return content["text"]
        return text(content.get("content")) if "content" in content else ""
    if isinstance(content, list):
        return "\n".join(t for t in (text(part) for part in content) if t)
    return ""


def _anthropic(blocks: list[Any]) -> Reply:
    said, calls = [], []
    for block in (b for b in blocks if isinstance(b, dict)):
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            said.append(block["text"])
        elif block.get("type") in ("tool_use", "server_tool_use"):
            name, arguments = str(block.get("name", "")), _json_text(block.get("input"))
            calls.append(ToolCall(_str_or_none(block.get("id")), name, arguments))
    return Reply("\n".join(said), tuple(calls))


def _responses(items: list[Any]) -> Reply:
    said, calls = [], []
    for item in (i for i in items if isinstance(i, dict)):
        if item.get("type") == "message":
            said.append(text([p for p in _list(item.get("content")) if isinstance(p, dict)]))
        elif item.get("type") in _CALLS - {"reasoning"}:
            arguments = item.get("arguments", item.get("input"))
            name = str(item.get("name", ""))
            calls.append(ToolCall(_str_or_none(item.get("call_id")), name, _json_text(arguments)))
    return Reply("\n".join(t for t in said if t), tuple(calls))


def _chat(message: dict[str, Any]) -> Reply:
    calls = []
    for call in (c for c in _list(message.get("tool_calls")) if isinstance(c, dict)):
        function = _dict(call.get("function"))
        name = str(function.get("name", ""))
        arguments = _json_text(function.get("arguments"))
        calls.append(ToolCall(_str_or_none(call.get("id")), name, arguments))
    return Reply(text(message.get("content")), tuple(calls))


def _gemini(parts: list[Any]) -> Reply:
    said, calls = [], []
    for part in (p for p in parts if isinstance(p, dict)):
        if isinstance(part.get("text"), str) and not part.get("thought"):
            said.append(part["text"])
        elif isinstance(part.get("functionCall"), dict):
            call = part["functionCall"]
            name = str(call.get("name", ""))
            calls.append(ToolCall(_str_or_none(call.get("id")), name, _json_text(call.get("args"))))
    return Reply("".join(said), tuple(calls))


def _trailing(items: list[Any], is_reply: Any) -> list[dict[str, Any]]:
    """The dict items after the last one ``is_reply`` holds for."""
    dicts = [i for i in items if isinstance(i, dict)]
    last = max((n for n, i in enumerate(dicts) if is_reply(i)), default=-1)
    return dicts[last + 1 :]


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, list) and value else None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _json_text(value: Any) -> str:
    """Arguments or a response as JSON text (a string stays as the model wrote it)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
