"""Real-shaped vendor payloads (as the APIs document and send them), for the pure tests."""

from __future__ import annotations

import json
from typing import Any

from recon.model.gateway import SseEvent


def events(*pairs: tuple[str | None, Any]) -> list[SseEvent]:
    return [
        SseEvent(event=name, data=data if isinstance(data, str) else json.dumps(data))
        for name, data in pairs
    ]


ANTHROPIC_MESSAGE = {
    "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
    "type": "message",
    "role": "assistant",
    "model": "claude-sonnet-4-5-20250929",
    "content": [{"type": "text", "text": "Hello!"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {
        "input_tokens": 12,
        "cache_creation_input_tokens": 2048,
        "cache_read_input_tokens": 4096,
        "output_tokens": 6,
        "service_tier": "standard",
    },
}

ANTHROPIC_STREAM = events(
    (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY",
                "type": "message",
                "role": "assistant",
                "content": [],
                "model": "claude-sonnet-4-5-20250929",
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": 25,
                    "cache_creation_input_tokens": 10,
                    "cache_read_input_tokens": 300,
                    "output_tokens": 1,
                },
            },
        },
    ),
    (
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ),
    ("ping", {"type": "ping"}),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
    ),
    (
        "content_block_delta",
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "!"}},
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 0}),
    (
        "content_block_start",
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {}},
        },
    ),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"command": "l'},
        },
    ),
    (
        "content_block_delta",
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": 's"}'},
        },
    ),
    ("content_block_stop", {"type": "content_block_stop", "index": 1}),
    (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 15},
        },
    ),
    ("message_stop", {"type": "message_stop"}),
)

RESPONSES_BODY = {
    "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
    "object": "response",
    "status": "completed",
    "model": "gpt-5-2025-08-07",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Hi", "annotations": []}],
        }
    ],
    "usage": {
        "input_tokens": 328,
        "input_tokens_details": {"cached_tokens": 128},
        "output_tokens": 52,
        "output_tokens_details": {"reasoning_tokens": 32},
        "total_tokens": 380,
    },
}

RESPONSES_STREAM = events(
    (
        "response.created",
        {
            "type": "response.created",
            "response": {**RESPONSES_BODY, "status": "in_progress", "usage": None},
        },
    ),
    (
        "response.output_text.delta",
        {
            "type": "response.output_text.delta",
            "item_id": "msg_1",
            "output_index": 0,
            "content_index": 0,
            "delta": "Hi",
        },
    ),
    ("response.completed", {"type": "response.completed", "response": RESPONSES_BODY}),
)

CHAT_BODY = {
    "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
    "object": "chat.completion",
    "created": 1741570283,
    "model": "gpt-4o-2024-08-06",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hello there", "refusal": None},
            "finish_reason": "stop",
        }
    ],
    "usage": {
        "prompt_tokens": 1117,
        "completion_tokens": 46,
        "total_tokens": 1163,
        "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    },
}


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1694268190,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        "usage": None,
    }


CHAT_STREAM = events(
    (None, _chunk({"role": "assistant", "content": ""})),
    (None, _chunk({"content": "Hello"})),
    (
        None,
        _chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": '{"cmd"'},
                    }
                ]
            }
        ),
    ),
    (None, _chunk({"tool_calls": [{"index": 0, "function": {"arguments": ': "ls"}'}}]})),
    (None, _chunk({}, "tool_calls")),
    (
        None,
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1694268190,
            "model": "gpt-4o-mini",
            "choices": [],
            "usage": {
                "prompt_tokens": 900,
                "completion_tokens": 120,
                "total_tokens": 1020,
                "prompt_tokens_details": {"cached_tokens": 200},
                "completion_tokens_details": {"reasoning_tokens": 64},
            },
        },
    ),
    (None, "[DONE]"),
)

GEMINI_BODY = {
    "candidates": [
        {
            "content": {"parts": [{"text": "Hello"}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "usageMetadata": {
        "promptTokenCount": 1200,
        "candidatesTokenCount": 30,
        "cachedContentTokenCount": 1000,
        "thoughtsTokenCount": 70,
        "totalTokenCount": 1300,
    },
    "modelVersion": "gemini-2.5-pro",
    "responseId": "abc",
}

GEMINI_STREAM = events(
    (
        None,
        {
            "candidates": [{"content": {"parts": [{"text": "Hel"}], "role": "model"}, "index": 0}],
            "usageMetadata": {"promptTokenCount": 40, "totalTokenCount": 40},
            "modelVersion": "gemini-2.5-flash",
        },
    ),
    (
        None,
        {
            "candidates": [
                {
                    "content": {"parts": [{"text": "lo"}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": 40,
                "candidatesTokenCount": 9,
                "thoughtsTokenCount": 11,
                "totalTokenCount": 60,
            },
            "modelVersion": "gemini-2.5-flash",
        },
    ),
)
