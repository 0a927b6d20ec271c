"""Any protocol's request as the chat conversation a :class:`recon.agents.Script` reads.

A script answers from the task (the first user message) and the turn (how many replies the
conversation already holds). Each vendor API carries them differently: Anthropic and Chat
``messages``, Responses ``input`` items (a reply is an assistant message, a function call
or reasoning, several in a row being one reply; a function call's output ends it), Gemini
``contents`` (role ``model``).
"""

from __future__ import annotations

from typing import Any

from recon.model.gateway import Protocol

_REPLY_ITEMS = frozenset({"function_call", "reasoning", "custom_tool_call"})
_RESULT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output"})


def chat_view(protocol: Protocol, body: dict[str, Any]) -> dict[str, Any]:
    """``{"model", "messages": [{"role", "content"}]}``, contents flattened to text."""
    turns = [(role, _text(content)) for role, content in _turns(protocol, body)]
    merged: list[dict[str, Any]] = []
    for role, text in turns:
        if role == "assistant" and merged and merged[-1]["role"] == "assistant":
            continue  # one reply, in several items
        merged.append({"role": role, "content": text})
    return {"model": body.get("model"), "messages": merged}


def reply_count(protocol: Protocol, body: dict[str, Any]) -> int:
    """How many replies the conversation already holds."""
    return sum(1 for m in chat_view(protocol, body)["messages"] if m["role"] == "assistant")


def _turns(protocol: Protocol, body: dict[str, Any]) -> list[tuple[str, Any]]:
    if protocol == "gemini":
        contents = body.get("contents") or []
        return [
            ("assistant" if c.get("role") == "model" else "user", c.get("parts"))
            for c in contents
            if isinstance(c, dict)
        ]
    if protocol == "responses":
        return _response_items(body.get("input"))
    messages = body.get("messages") or []
    return [
        ("assistant" if m.get("role") == "assistant" else str(m.get("role")), m.get("content"))
        for m in messages
        if isinstance(m, dict)
    ]


def _response_items(items: Any) -> list[tuple[str, Any]]:
    if isinstance(items, str):
        return [("user", items)]
    found: list[tuple[str, Any]] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("role") == "assistant" or item.get("type") in _REPLY_ITEMS:
            found.append(("assistant", item.get("content")))
        elif item.get("type") in _RESULT_ITEMS:  # ends the reply before it
            found.append(("tool", item.get("output")))
        elif "role" in item:
            found.append((str(item["role"]), item.get("content")))
    return found


def _text(content: Any) -> str:
    """Text of a string, a list of blocks or parts (``text``), nested or not."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        return content["text"] if isinstance(content.get("text"), str) else ""
    if isinstance(content, list):
        return "\n".join(t for t in (_text(part) for part in content) if t)
    return ""
