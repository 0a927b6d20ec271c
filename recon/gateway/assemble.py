"""The message a streamed response assembles to, per protocol: what the transcript shows.

Each is the shape the same API returns when not streamed (an Anthropic message, a Responses
response, a chat completion, a Gemini ``GenerateContentResponse``), so a reader handles one
shape per protocol whether the call streamed or not.
"""

from __future__ import annotations

import json
from typing import Any

from recon.model.gateway import Protocol, SseEvent


def assemble(protocol: Protocol, events: list[SseEvent]) -> Any:
    datas = [d for d in (_json(e.data) for e in events) if isinstance(d, dict)]
    if protocol == "anthropic":
        return _anthropic(datas)
    if protocol == "responses":
        done = [d["response"] for d in datas if isinstance(d.get("response"), dict)]
        return done[-1] if done else None
    if protocol == "chat":
        return _chat(datas)
    return _gemini(datas)


def _anthropic(datas: list[dict[str, Any]]) -> Any:
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    for data in datas:
        kind = data.get("type")
        if kind == "message_start" and isinstance(data.get("message"), dict):
            message = dict(data["message"])
        elif kind == "content_block_start" and isinstance(data.get("content_block"), dict):
            blocks[int(data.get("index", len(blocks)))] = dict(data["content_block"])
        elif kind == "content_block_delta":
            _anthropic_delta(blocks.setdefault(int(data.get("index", 0)), {}), data.get("delta"))
        elif kind == "message_delta" and message is not None:
            message.update(data.get("delta") or {})
            message["usage"] = {**(message.get("usage") or {}), **(data.get("usage") or {})}
    if message is None:
        return None
    message["content"] = [_parsed_input(blocks[i]) for i in sorted(blocks)]
    return message


def _anthropic_delta(block: dict[str, Any], delta: Any) -> None:
    if not isinstance(delta, dict):
        return
    for key, field in (("text", "text"), ("thinking", "thinking"), ("signature", "signature")):
        if isinstance(delta.get(key), str):
            block[field] = block.get(field, "") + delta[key]
    if isinstance(delta.get("partial_json"), str):
        block["_json"] = block.get("_json", "") + delta["partial_json"]


def _parsed_input(block: dict[str, Any]) -> dict[str, Any]:
    partial = block.pop("_json", None)
    if partial is not None:
        parsed = _json(partial)
        block["input"] = parsed if parsed is not None else partial
    return block


def _chat(datas: list[dict[str, Any]]) -> Any:
    if not datas:
        return None
    choices: dict[int, dict[str, Any]] = {}
    for data in datas:
        for choice in data.get("choices") or []:
            _chat_choice(choices.setdefault(int(choice.get("index", 0)), {}), choice)
    first, usage = datas[0], [d["usage"] for d in datas if d.get("usage")]
    return {
        "id": first.get("id"),
        "object": "chat.completion",
        "model": first.get("model"),
        "choices": [{"index": i, **choices[i]} for i in sorted(choices)],
        "usage": usage[-1] if usage else None,
    }


def _chat_choice(into: dict[str, Any], choice: dict[str, Any]) -> None:
    message = into.setdefault("message", {"role": "assistant", "content": None})
    delta = choice.get("delta") or {}
    if isinstance(delta.get("content"), str):
        message["content"] = (message["content"] or "") + delta["content"]
    for call in delta.get("tool_calls") or []:
        calls = message.setdefault("tool_calls", [])
        index = int(call.get("index", len(calls)))
        while len(calls) <= index:
            calls.append({"function": {"name": "", "arguments": ""}})
        _chat_tool_call(calls[index], call)
    if choice.get("finish_reason") is not None:
        into["finish_reason"] = choice["finish_reason"]


def _chat_tool_call(into: dict[str, Any], delta: dict[str, Any]) -> None:
    for key in ("id", "type"):
        if delta.get(key) is not None:
            into[key] = delta[key]
    function = delta.get("function") or {}
    for key in ("name", "arguments"):
        if isinstance(function.get(key), str):
            into["function"][key] += function[key]


def _gemini(datas: list[dict[str, Any]]) -> Any:
    if not datas:
        return None
    parts: list[dict[str, Any]] = []
    finish = None
    for data in datas:
        for first in (data.get("candidates") or [])[:1]:
            finish = first.get("finishReason", finish)
            for part in (first.get("content") or {}).get("parts") or []:
                _gemini_part(parts, part)
    last = datas[-1]
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    meta = [d["usageMetadata"] for d in datas if d.get("usageMetadata")]
    return {
        "candidates": [candidate],
        "usageMetadata": meta[-1] if meta else None,
        "modelVersion": last.get("modelVersion"),
    }


def _gemini_part(parts: list[dict[str, Any]], part: Any) -> None:
    """Consecutive text parts (of the same kind: thought or not) are one part."""
    if not isinstance(part, dict):
        return
    previous = parts[-1] if parts else {}
    if _is_text(previous) and _is_text(part) and previous.get("thought") == part.get("thought"):
        previous["text"] += part["text"]
    else:
        parts.append(dict(part))


def _is_text(part: dict[str, Any]) -> bool:
    return set(part) - {"thought"} == {"text"} and isinstance(part["text"], str)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
