"""Token usage from each vendor API's own fields, in one vocabulary (``recon.model.Usage``).

- Anthropic: ``input_tokens`` excludes the cache, ``cache_read_input_tokens`` and
  ``cache_creation_input_tokens`` are apart; streamed, ``message_start`` opens the usage and
  every ``message_delta`` updates the fields it carries (its counts are cumulative).
- OpenAI (Responses and Chat): the input count includes ``cached_tokens`` and the output
  count includes ``reasoning_tokens``; streamed, ``response.completed`` (Responses) and the
  final chunk of ``stream_options.include_usage`` (Chat) carry it.
- Gemini: ``promptTokenCount`` includes ``cachedContentTokenCount``; thoughts
  (``thoughtsTokenCount``) are billed as output but counted apart from
  ``candidatesTokenCount``; streamed, the last chunk's ``usageMetadata`` holds the totals.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from recon.model.gateway import Protocol, SseEvent, Usage

_ANTHROPIC_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
)
_RESPONSES_DONE = ("response.completed", "response.incomplete", "response.failed")


def _count(mapping: Any, key: str) -> int:
    value = mapping.get(key) if isinstance(mapping, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def anthropic(usage: Any) -> Usage:
    return Usage(
        input=_count(usage, "input_tokens"),
        output=_count(usage, "output_tokens"),
        cache_read=_count(usage, "cache_read_input_tokens"),
        cache_write=_count(usage, "cache_creation_input_tokens"),
    )


def openai(usage: Any, prompt: str, completion: str) -> Usage:
    """Responses (``input``/``output``) and Chat (``prompt``/``completion``) alike."""
    details = usage.get(f"{prompt}_tokens_details") if isinstance(usage, Mapping) else None
    out_details = usage.get(f"{completion}_tokens_details") if isinstance(usage, Mapping) else None
    cached = _count(details, "cached_tokens")
    return Usage(
        input=max(_count(usage, f"{prompt}_tokens") - cached, 0),
        output=_count(usage, f"{completion}_tokens"),
        cache_read=cached,
        reasoning=_count(out_details, "reasoning_tokens"),
    )


def gemini(meta: Any) -> Usage:
    cached = _count(meta, "cachedContentTokenCount")
    thoughts = _count(meta, "thoughtsTokenCount")
    return Usage(
        input=max(_count(meta, "promptTokenCount") - cached, 0),
        output=_count(meta, "candidatesTokenCount") + thoughts,
        cache_read=cached,
        reasoning=thoughts,
    )


def from_body(protocol: Protocol, body: Any) -> Usage | None:
    """The usage of a response that was not streamed; None when it reports none. (Gemini's
    ``streamGenerateContent`` without ``alt=sse`` answers a JSON array of chunks.)"""
    if protocol == "gemini" and isinstance(body, list):
        return from_events("gemini", [SseEvent(data=json.dumps(chunk)) for chunk in body])
    if not isinstance(body, Mapping):
        return None
    if protocol == "gemini":
        meta = body.get("usageMetadata")
        return gemini(meta) if isinstance(meta, Mapping) else None
    usage = body.get("usage")
    if not isinstance(usage, Mapping):
        return None
    if protocol == "anthropic":
        return anthropic(usage)
    if protocol == "responses":
        return openai(usage, "input", "output")
    return openai(usage, "prompt", "completion")


def from_events(protocol: Protocol, events: list[SseEvent]) -> Usage | None:
    """The usage a streamed response assembles to; None when its events report none."""
    datas = [data for data in (_json(e.data) for e in events) if isinstance(data, Mapping)]
    if protocol == "anthropic":
        return _anthropic_stream(datas)
    if protocol == "responses":
        done = [d for d in datas if d.get("type") in _RESPONSES_DONE]
        return from_body("responses", done[-1].get("response")) if done else None
    key = "usageMetadata" if protocol == "gemini" else "usage"
    found = [d for d in datas if isinstance(d.get(key), Mapping)]
    return from_body(protocol, found[-1]) if found else None


def _anthropic_stream(datas: list[Mapping[str, Any]]) -> Usage | None:
    fields: dict[str, Any] = {}
    for data in datas:
        if data.get("type") == "message_start" and isinstance(data.get("message"), Mapping):
            fields.update(_usage_fields(data["message"].get("usage")))
        elif data.get("type") == "message_delta":
            fields.update(_usage_fields(data.get("usage")))
    return anthropic(fields) if fields else None


def _usage_fields(usage: Any) -> dict[str, Any]:
    if not isinstance(usage, Mapping):
        return {}
    return {k: usage[k] for k in _ANTHROPIC_FIELDS if usage.get(k) is not None}


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
