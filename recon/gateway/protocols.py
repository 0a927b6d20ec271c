"""Which vendor API a request speaks, and how each one carries keys and headers.

Pure functions over a parsed request (method, path, query, JSON body, headers): no socket.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from recon.model.gateway import Protocol, Provider

Endpoint = Literal["generate", "count_tokens"]

PROVIDER: dict[Protocol, Provider] = {
    "anthropic": "anthropic",
    "responses": "openai",
    "chat": "openai",
    "gemini": "gemini",
}
_GEMINI = re.compile(
    r"^/v1(?:beta|alpha)?/models/([^/:]+):(generateContent|streamGenerateContent)$"
)
_FIXED: dict[str, tuple[Protocol, Endpoint]] = {
    "/v1/messages": ("anthropic", "generate"),
    "/v1/messages/count_tokens": ("anthropic", "count_tokens"),
    "/v1/responses": ("responses", "generate"),
    "/v1/chat/completions": ("chat", "generate"),
}
AUTH_HEADERS = frozenset({"x-api-key", "authorization", "x-goog-api-key", "api-key"})
"""Request headers that carry a key, in any of the vendors' clients."""
FORWARDED = frozenset(
    {
        "accept",
        "anthropic-beta",
        "anthropic-version",
        "content-type",
        "openai-beta",
        "user-agent",
        "x-goog-api-client",
        "x-stainless-lang",
        "x-stainless-package-version",
        "x-stainless-retry-count",
    }
)
"""Request headers the gateway passes upstream (and records); every other one stays."""
RESPONSE_KEPT = frozenset(
    {"content-type", "request-id", "x-request-id", "openai-processing-ms", "retry-after"}
)
"""Upstream response headers passed to the agent and recorded."""


@dataclass(frozen=True)
class Call:
    """What one request is: its protocol and endpoint, the model it asks, whether streamed."""

    protocol: Protocol
    endpoint: Endpoint
    model: str
    stream: bool

    @property
    def provider(self) -> Provider:
        return PROVIDER[self.protocol]


def identify(path: str, query: Mapping[str, str], body: Any) -> Call | None:
    """The call a ``POST path?query`` with JSON ``body`` makes; None for no known endpoint."""
    if not isinstance(body, dict):
        return None
    fixed = _FIXED.get(path.rstrip("/"))
    if fixed is not None:
        protocol, endpoint = fixed
        stream = endpoint == "generate" and body.get("stream") is True
        return Call(protocol, endpoint, str(body.get("model", "")), stream)
    match = _GEMINI.match(path)
    if match is None:
        return None
    streamed = match.group(2) == "streamGenerateContent"
    return Call("gemini", "generate", match.group(1), streamed)


def presented_tokens(headers: Mapping[str, str], query: Mapping[str, str]) -> list[str]:
    """Every key the request carries, the way each vendor's client sends one: ``x-api-key``
    (Anthropic), ``Authorization: Bearer`` (OpenAI), ``x-goog-api-key`` or ``?key=``
    (Gemini)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    found = [lowered.get("x-api-key"), lowered.get("x-goog-api-key"), query.get("key")]
    bearer = lowered.get("authorization", "")
    if bearer[:7].lower() == "bearer ":
        found.append(bearer[7:].strip())
    return [token for token in found if token]


def credential_headers(provider: Provider, credential: str) -> dict[str, str]:
    """The header that carries the real key upstream, for ``provider``."""
    if provider == "anthropic":
        return {"x-api-key": credential}
    if provider == "gemini":
        return {"x-goog-api-key": credential}
    return {"Authorization": f"Bearer {credential}"}


def forwarded_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The agent's request headers that go upstream: known, credential-free ones only."""
    return {k.lower(): v for k, v in headers.items() if k.lower() in FORWARDED}


def kept_response_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The upstream's response headers passed to the agent and recorded."""
    return {k.lower(): v for k, v in headers.items() if k.lower() in RESPONSE_KEPT}


def upstream_query(query: Mapping[str, str]) -> dict[str, str]:
    """The query string sent upstream (``?beta=true``, Gemini's ``alt=sse``): never the
    agent's ``key``."""
    return {k: v for k, v in query.items() if k != "key"}


def upstream_body(call: Call, body: dict[str, Any]) -> dict[str, Any]:
    """The body sent upstream: a streamed chat completion is asked for its usage chunk
    (``stream_options.include_usage``), without which it could not be metered."""
    if call.protocol != "chat" or not call.stream:
        return body
    options = body.get("stream_options")
    options = dict(options) if isinstance(options, dict) else {}
    if options.get("include_usage") is True:
        return body
    return {**body, "stream_options": {**options, "include_usage": True}}
