"""Which API a request speaks, its model, its keys, and what goes upstream."""

from __future__ import annotations

import pytest

from recon.gateway.protocols import (
    Call,
    credential_headers,
    forwarded_headers,
    identify,
    presented_tokens,
    upstream_body,
    upstream_query,
)


@pytest.mark.parametrize(
    ("path", "body", "expected"),
    [
        (
            "/v1/messages",
            {"model": "claude-x", "stream": True},
            Call("anthropic", "generate", "claude-x", True),
        ),
        ("/v1/messages", {"model": "claude-x"}, Call("anthropic", "generate", "claude-x", False)),
        (
            "/v1/messages/count_tokens",
            {"model": "claude-x", "stream": True},
            Call("anthropic", "count_tokens", "claude-x", False),
        ),
        (
            "/v1/responses",
            {"model": "gpt-5", "stream": True},
            Call("responses", "generate", "gpt-5", True),
        ),
        ("/v1/chat/completions", {"model": "gpt-4o"}, Call("chat", "generate", "gpt-4o", False)),
        (
            "/v1beta/models/gemini-2.5-pro:generateContent",
            {},
            Call("gemini", "generate", "gemini-2.5-pro", False),
        ),
        (
            "/v1beta/models/gemini-2.5-pro:streamGenerateContent",
            {},
            Call("gemini", "generate", "gemini-2.5-pro", True),
        ),
    ],
)
def test_identify(path: str, body: dict[str, object], expected: Call) -> None:
    assert identify(path, {"beta": "true"}, body) == expected


def test_unknown_paths_and_bodies_are_none() -> None:
    assert identify("/v1/embeddings", {}, {"model": "x"}) is None
    assert identify("/v1/messages", {}, ["not", "a", "mapping"]) is None
    assert identify("/v1beta/models/a/b:generateContent", {}, {}) is None


def test_every_vendor_way_of_presenting_a_key() -> None:
    assert presented_tokens({"X-Api-Key": "a"}, {}) == ["a"]
    assert presented_tokens({"Authorization": "Bearer b"}, {}) == ["b"]
    assert presented_tokens({"x-goog-api-key": "c"}, {"key": "d"}) == ["c", "d"]
    assert presented_tokens({"Authorization": "Basic e"}, {}) == []


def test_credentials_go_upstream_in_the_provider_header_and_agent_keys_do_not() -> None:
    assert credential_headers("anthropic", "k") == {"x-api-key": "k"}
    assert credential_headers("openai", "k") == {"Authorization": "Bearer k"}
    assert credential_headers("gemini", "k") == {"x-goog-api-key": "k"}
    headers = {
        "X-Api-Key": "t",
        "Authorization": "Bearer t",
        "anthropic-version": "2023-06-01",
        "Cookie": "c",
        "Host": "h",
    }
    assert forwarded_headers(headers) == {"anthropic-version": "2023-06-01"}
    assert upstream_query({"key": "t", "alt": "sse"}) == {"alt": "sse"}


def test_a_streamed_chat_completion_is_asked_for_its_usage() -> None:
    call = Call("chat", "generate", "gpt-4o", True)
    body = {"model": "gpt-4o", "stream": True, "stream_options": {"other": 1}}
    assert upstream_body(call, body)["stream_options"] == {"other": 1, "include_usage": True}
    unstreamed = Call("chat", "generate", "gpt-4o", False)
    assert upstream_body(unstreamed, {"model": "gpt-4o"}) == {"model": "gpt-4o"}
