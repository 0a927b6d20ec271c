"""A text reply in each vendor API's shape, as one JSON body or as its server-sent events.

What the scripted model answers; the shapes are those the APIs document, down to the usage
fields, so the gateway meters a scripted call exactly as it would a live one.
"""

from __future__ import annotations

import json
from typing import Any

from recon.gateway.protocols import Call
from recon.model.gateway import SseEvent, Usage

CREATED = 1767225600


def body(call: Call, text: str, usage: Usage, number: int) -> dict[str, Any]:
    """The unstreamed response carrying ``text``."""
    if call.endpoint == "count_tokens":
        return {"input_tokens": usage.input + usage.cache_read + usage.cache_write}
    if call.protocol == "anthropic":
        return _anthropic(call, text, usage, number)
    if call.protocol == "responses":
        return _response(call, text, usage, number, "completed")
    if call.protocol == "chat":
        return _completion(call, text, usage, number)
    return _gemini(text, usage, call.model, finish=True)


def events(call: Call, text: str, usage: Usage, number: int) -> list[SseEvent]:
    """The streamed response carrying ``text``, in two deltas."""
    half = len(text) // 2
    pieces = [text[:half], text[half:]]
    if call.protocol == "anthropic":
        return _anthropic_events(call, text, pieces, usage, number)
    if call.protocol == "responses":
        return _response_events(call, text, pieces, usage, number)
    if call.protocol == "chat":
        return _chat_events(call, pieces, usage, number)
    return [
        _data(_gemini(pieces[0], Usage(input=usage.input), call.model, finish=False)),
        _data(_gemini(pieces[1], usage, call.model, finish=True)),
    ]


ToolUse = tuple[str, str, dict[str, Any]]
"""A tool call in a reply: its id, the tool's name, its input."""


def tool_body(
    call: Call, text: str, calls: list[ToolUse], usage: Usage, number: int
) -> dict[str, Any]:
    """The unstreamed response carrying ``text`` and the tool ``calls`` (Anthropic,
    Responses, Gemini)."""
    if call.protocol == "responses":
        return response_tool_body(call, text, calls, usage, number)
    if call.protocol == "gemini":
        return gemini_tool_body(call, text, calls, usage)
    if call.protocol == "chat" and not calls:  # aider: its edits are in the text
        return _completion(call, text, usage, number)
    if call.protocol != "anthropic":
        raise ValueError(f"scripted tool replies: no {call.protocol} shape yet")
    message = _anthropic(call, text, usage, number)
    message["content"] = _anthropic_blocks(text, calls)
    message["stop_reason"] = "tool_use" if calls else "end_turn"
    return message


def tool_events(
    call: Call, text: str, calls: list[ToolUse], usage: Usage, number: int
) -> list[SseEvent]:
    """The streamed response carrying ``text`` and the tool ``calls``: a text block in two
    deltas, then each call's input in two ``input_json_delta`` pieces (Anthropic; Responses:
    :func:`response_tool_events`; Gemini: :func:`gemini_tool_events`)."""
    if call.protocol == "responses":
        return response_tool_events(call, text, calls, usage, number)
    if call.protocol == "gemini":
        return gemini_tool_events(call, text, calls, usage)
    if call.protocol == "chat" and not calls:
        return _chat_events(call, _halves(text), usage, number)
    if call.protocol != "anthropic":
        raise ValueError(f"scripted tool replies: no {call.protocol} shape yet")
    start = _anthropic(call, "", usage.model_copy(update={"output": 1}), number)
    start.update(content=[], stop_reason=None)
    found = [_event("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(_anthropic_blocks(text, calls)):
        if block["type"] == "text":
            half = len(text) // 2
            empty: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in (text[:half], text[half:])]
        else:
            empty = {**block, "input": {}}
            data = json.dumps(block["input"])
            half = len(data) // 2
            kind = "input_json_delta"
            deltas = [{"type": kind, "partial_json": p} for p in (data[:half], data[half:])]
        opened = {"type": "content_block_start", "index": index, "content_block": empty}
        found.append(_event("content_block_start", opened))
        for delta in deltas:
            moved = {"type": "content_block_delta", "index": index, "delta": delta}
            found.append(_event("content_block_delta", moved))
        found.append(_event("content_block_stop", {"type": "content_block_stop", "index": index}))
    end = {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None}
    found += [
        _event(
            "message_delta",
            {"type": "message_delta", "delta": end, "usage": {"output_tokens": usage.output}},
        ),
        _event("message_stop", {"type": "message_stop"}),
    ]
    return found


def _anthropic_blocks(text: str, calls: list[ToolUse]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text or not calls else []
    blocks += [{"type": "tool_use", "id": i, "name": n, "input": inp} for i, n, inp in calls]
    return blocks


def _anthropic_usage(usage: Usage) -> dict[str, int]:
    return {
        "input_tokens": usage.input,
        "cache_creation_input_tokens": usage.cache_write,
        "cache_read_input_tokens": usage.cache_read,
        "output_tokens": usage.output,
    }


def _anthropic(call: Call, text: str, usage: Usage, number: int) -> dict[str, Any]:
    return {
        "id": f"msg_scripted_{number}",
        "type": "message",
        "role": "assistant",
        "model": call.model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": _anthropic_usage(usage),
    }


def _anthropic_events(
    call: Call, text: str, pieces: list[str], usage: Usage, number: int
) -> list[SseEvent]:
    start = _anthropic(call, "", usage.model_copy(update={"output": 1}), number)
    start.update(content=[], stop_reason=None)
    deltas = [
        _event(
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}},
        )
        for p in pieces
    ]
    block = {"type": "text", "text": ""}
    end = {"stop_reason": "end_turn", "stop_sequence": None}
    return [
        _event("message_start", {"type": "message_start", "message": start}),
        _event(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": block},
        ),
        _event("ping", {"type": "ping"}),
        *deltas,
        _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _event(
            "message_delta",
            {"type": "message_delta", "delta": end, "usage": {"output_tokens": usage.output}},
        ),
        _event("message_stop", {"type": "message_stop"}),
    ]


def _openai_usage(usage: Usage, prompt: str, completion: str) -> dict[str, Any]:
    return {
        f"{prompt}_tokens": usage.input + usage.cache_read,
        f"{completion}_tokens": usage.output,
        "total_tokens": usage.input + usage.cache_read + usage.output,
        f"{prompt}_tokens_details": {"cached_tokens": usage.cache_read},
        f"{completion}_tokens_details": {"reasoning_tokens": usage.reasoning},
    }


def _message_item(text: str, number: int) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    return {
        "type": "message",
        "id": f"msg_scripted_{number}",
        "status": "completed",
        "role": "assistant",
        "content": content,
    }


def _response(
    call: Call, text: str, usage: Usage | None, number: int, status: str
) -> dict[str, Any]:
    return {
        "id": f"resp_scripted_{number}",
        "object": "response",
        "created_at": CREATED,
        "status": status,
        "model": call.model,
        "output": [_message_item(text, number)] if status == "completed" else [],
        "usage": _openai_usage(usage, "input", "output") if usage is not None else None,
    }


def _response_events(
    call: Call, text: str, pieces: list[str], usage: Usage, number: int
) -> list[SseEvent]:
    item = _message_item(text, number)
    pending = {**item, "status": "in_progress", "content": []}
    found: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": _response(call, text, None, number, "in_progress")}),
        ("response.output_item.added", {"output_index": 0, "item": pending}),
        *[
            (
                "response.output_text.delta",
                {"item_id": item["id"], "output_index": 0, "content_index": 0, "delta": p},
            )
            for p in pieces
        ],
        (
            "response.output_text.done",
            {"item_id": item["id"], "output_index": 0, "content_index": 0, "text": text},
        ),
        ("response.output_item.done", {"output_index": 0, "item": item}),
        ("response.completed", {"response": _response(call, text, usage, number, "completed")}),
    ]
    return [
        _event(kind, {"type": kind, "sequence_number": i, **data})
        for i, (kind, data) in enumerate(found)
    ]


def _function_calls(calls: list[ToolUse]) -> list[dict[str, Any]]:
    """Responses ``function_call`` items: the arguments as JSON text, as the API sends them."""
    return [
        {
            "type": "function_call",
            "id": f"fc_{ident}",
            "call_id": ident,
            "name": name,
            "arguments": json.dumps(arguments, ensure_ascii=False),
            "status": "completed",
        }
        for ident, name, arguments in calls
    ]


def _response_output(text: str, calls: list[ToolUse], number: int) -> list[dict[str, Any]]:
    """A reply's output items: the message (when it says something, or calls nothing), then
    each function call."""
    said = [_message_item(text, number)] if text or not calls else []
    return [*said, *_function_calls(calls)]


def response_tool_body(
    call: Call, text: str, calls: list[ToolUse], usage: Usage, number: int
) -> dict[str, Any]:
    """The unstreamed Responses reply carrying ``text`` and the function ``calls``."""
    response = _response(call, text, usage, number, "completed")
    response["output"] = _response_output(text, calls, number)
    return response


def response_tool_events(
    call: Call, text: str, calls: list[ToolUse], usage: Usage, number: int
) -> list[SseEvent]:
    """The streamed Responses reply: each output item added, its text or arguments in two
    deltas, done; then ``response.completed`` holding them all."""
    items = _response_output(text, calls, number)
    found: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": _response(call, text, None, number, "in_progress")})
    ]
    for index, item in enumerate(items):
        found += _item_events(index, item)
    done = _response(call, text, usage, number, "completed")
    done["output"] = items
    found.append(("response.completed", {"response": done}))
    return [
        _event(kind, {"type": kind, "sequence_number": i, **data})
        for i, (kind, data) in enumerate(found)
    ]


def _item_events(index: int, item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    where = {"item_id": item["id"], "output_index": index}
    if item["type"] == "message":
        text = item["content"][0]["text"]
        pending = {**item, "status": "in_progress", "content": []}
        kind, deltas, final = "response.output_text", _halves(text), {"text": text}
        where = {**where, "content_index": 0}
    else:
        pending = {**item, "status": "in_progress", "arguments": ""}
        args = item["arguments"]
        kind, deltas, final = "response.function_call_arguments", _halves(args), {"arguments": args}
    return [
        ("response.output_item.added", {"output_index": index, "item": pending}),
        *[(f"{kind}.delta", {**where, "delta": d}) for d in deltas],
        (f"{kind}.done", {**where, **final}),
        ("response.output_item.done", {"output_index": index, "item": item}),
    ]


def _halves(text: str) -> list[str]:
    half = len(text) // 2
    return [text[:half], text[half:]]


def _completion(call: Call, text: str, usage: Usage, number: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion",
        "created": CREATED,
        "model": call.model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": _openai_usage(usage, "prompt", "completion"),
    }


def _chat_events(call: Call, pieces: list[str], usage: Usage, number: int) -> list[SseEvent]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> SseEvent:
        return _data(
            {
                "id": f"chatcmpl-scripted-{number}",
                "object": "chat.completion.chunk",
                "created": CREATED,
                "model": call.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    final = {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": call.model,
        "choices": [],
        "usage": _openai_usage(usage, "prompt", "completion"),
    }
    return [
        chunk({"role": "assistant", "content": ""}),
        *[chunk({"content": p}) for p in pieces],
        chunk({}, "stop"),
        _data(final),
        SseEvent(data="[DONE]"),
    ]


def _gemini(text: str, usage: Usage, model: str, finish: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {
        "content": {"parts": [{"text": text}], "role": "model"},
        "index": 0,
    }
    if finish:
        candidate["finishReason"] = "STOP"
    meta = {
        "promptTokenCount": usage.input + usage.cache_read,
        "candidatesTokenCount": usage.output - usage.reasoning,
        "thoughtsTokenCount": usage.reasoning,
        "cachedContentTokenCount": usage.cache_read,
        "totalTokenCount": usage.input + usage.cache_read + usage.output,
    }
    return {
        "candidates": [candidate],
        "usageMetadata": meta,
        "modelVersion": model,
        "responseId": "scripted",
    }


def _gemini_parts(text: str, calls: list[ToolUse]) -> list[dict[str, Any]]:
    """A Gemini reply's parts: its text (when it says something, or calls nothing), then a
    ``functionCall`` part per call (name and args: the Gemini API gives a call no id)."""
    said = [{"text": text}] if text or not calls else []
    return [*said, *({"functionCall": {"name": n, "args": a}} for _, n, a in calls)]


def gemini_tool_body(call: Call, text: str, calls: list[ToolUse], usage: Usage) -> dict[str, Any]:
    """The unstreamed ``generateContent`` reply carrying ``text`` and the function ``calls``."""
    reply = _gemini(text, usage, call.model, finish=True)
    reply["candidates"][0]["content"]["parts"] = _gemini_parts(text, calls)
    return reply


def gemini_tool_events(call: Call, text: str, calls: list[ToolUse], usage: Usage) -> list[SseEvent]:
    """The streamed reply (``streamGenerateContent?alt=sse``): the text in a chunk of its
    own, then one chunk with every ``functionCall`` part, the finish reason and the usage
    (the API sends a call whole, never in pieces)."""
    if not calls:
        return events(call, text, usage, 0)
    first = _gemini(text, Usage(input=usage.input), call.model, finish=False)
    found = [_data(first)] if text else []
    last = _gemini("", usage, call.model, finish=True)
    last["candidates"][0]["content"]["parts"] = _gemini_parts("", calls)
    return [*found, _data(last)]


def _event(name: str, data: dict[str, Any]) -> SseEvent:
    return SseEvent(event=name, data=json.dumps(data, separators=(",", ":")))


def _data(data: dict[str, Any]) -> SseEvent:
    return SseEvent(data=json.dumps(data, separators=(",", ":")))
