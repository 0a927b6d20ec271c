"""Every protocol, streamed and not, through a real gateway socket to the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.gateway.assemble import assemble
from recon.gateway.conversation import chat_view, reply_count
from recon.gateway.running import serve_gateway
from recon.gateway.upstream import ScriptedUpstream, scripted_usage
from recon.gateway.usage import from_body, from_events
from tests.gateway.conftest import SCRIPT, TABLE, auth, config, post, request_for

PROTOCOLS = ["anthropic", "responses", "chat", "gemini"]


def _text(protocol: str, message: dict) -> str:
    if protocol == "anthropic":
        return str(message["content"][0]["text"])
    if protocol == "responses":
        return str(message["output"][0]["content"][0]["text"])
    if protocol == "chat":
        return str(message["choices"][0]["message"]["content"])
    return str(message["candidates"][0]["content"]["parts"][0]["text"])


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_each_protocol_through_the_gateway(protocol: str, stream: bool) -> None:
    gateway_config = config(ScriptedUpstream(SCRIPT))
    path, body = request_for(protocol, stream, turns=1)
    with serve_gateway(gateway_config, tcp=True) as gateway:
        answer = post(gateway.port or 0, path, body, auth(protocol, gateway.token))
        recording = gateway.recording()
    assert answer.status == 200, answer.data
    if stream:
        assert answer.headers["content-type"].startswith("text/event-stream")
        message = assemble(protocol, answer.events)
        usage = from_events(protocol, answer.events)
    else:
        message, usage = answer.json, from_body(protocol, answer.json)
    assert _text(protocol, message) == SCRIPT.replies[1]
    (exchange,) = recording.exchanges
    assert exchange.usage == usage == scripted_usage(protocol, exchange.request, SCRIPT.replies[1])
    assert (exchange.stream, exchange.status, exchange.turn) == (stream, 200, 1)
    assert _text(protocol, exchange.message) == SCRIPT.replies[1]
    assert (exchange.events is not None) == stream and (exchange.body is not None) != stream
    assert recording.usage == usage and recording.outcome is None
    if stream:
        assert exchange.first_byte_ms is not None and exchange.total_ms >= exchange.first_byte_ms
    assert exchange.tries[-1].ms <= exchange.total_ms


def test_count_tokens_is_answered_and_not_billed() -> None:
    _, body = request_for("anthropic", False)
    with serve_gateway(config(ScriptedUpstream(SCRIPT)), tcp=True) as gateway:
        answer = post(
            gateway.port or 0,
            "/v1/messages/count_tokens?beta=true",
            body,
            auth("anthropic", gateway.token),
        )
        recording = gateway.recording()
    assert answer.status == 200 and answer.json["input_tokens"] > 0
    assert recording.exchanges[0].endpoint == "count_tokens"
    assert recording.usage.tokens == 0


def test_a_unix_socket_and_every_way_of_presenting_the_token(tmp_path: Path) -> None:
    sock = tmp_path / "gateway.sock"
    path, body = request_for("gemini", False)
    with serve_gateway(config(ScriptedUpstream(SCRIPT)), socket=sock) as gateway:
        by_header = post(sock, path, body, {"x-goog-api-key": gateway.token})
        by_query = post(sock, f"{path}?key={gateway.token}", body, {})
        chat_path, chat_body = request_for("chat", False)
        bearer = post(sock, chat_path, chat_body, {"Authorization": f"Bearer {gateway.token}"})
    assert (by_header.status, by_query.status, bearer.status) == (200, 200, 200)


def test_a_bad_token_is_refused_and_the_token_is_revoked_at_close(tmp_path: Path) -> None:
    sock = tmp_path / "gateway.sock"
    path, body = request_for("anthropic", False)
    with serve_gateway(config(ScriptedUpstream(SCRIPT)), socket=sock) as gateway:
        bad = post(sock, path, body, auth("anthropic", "not-the-token"))
        none = post(sock, path, body, {})
        assert gateway.recording().exchanges == []
        attempt = gateway._attempt
        assert attempt.authorized({"x-api-key": gateway.token}, {})
    assert (bad.status, none.status) == (401, 401)
    assert bad.json["error"]["type"] == "authentication_error"
    assert not attempt.authorized({"x-api-key": gateway.token}, {})
    with pytest.raises(OSError):
        post(sock, path, body, auth("anthropic", gateway.token))


def test_metering_totals_are_the_upstream_usage_fields_summed_and_priced() -> None:
    asked = []
    with serve_gateway(config(ScriptedUpstream(SCRIPT)), tcp=True) as gateway:
        for protocol in PROTOCOLS:
            for stream, turns in ((False, 0), (True, 1), (True, 2)):
                path, body = request_for(protocol, stream, turns)
                answer = post(gateway.port or 0, path, body, auth(protocol, gateway.token))
                assert answer.status == 200
                asked.append((protocol, answer))
        recording = gateway.recording()
    seen = [
        from_events(p, a.events)
        if a.headers["content-type"].startswith("text/event-stream")
        else from_body(p, a.json)
        for p, a in asked
    ]
    total = seen[0]
    for usage in seen[1:]:
        total = total + usage
    assert recording.usage == total
    expected = 0.0
    for exchange in recording.exchanges:
        assert exchange.usage is not None
        price = TABLE.prices[
            {"anthropic": "anthropic", "gemini": "gemini"}.get(exchange.protocol, "openai")
        ][exchange.model]
        u = exchange.usage
        call = (
            u.input * price.input
            + u.output * price.output
            + u.cache_read * price.cache_read
            + u.cache_write * price.cache_write
        )
        assert exchange.cost_usd == pytest.approx(call, rel=1e-12)
        expected += call
    assert recording.cost_usd == pytest.approx(expected, rel=1e-12)


def test_conversation_turns_read_alike_in_every_protocol() -> None:
    for protocol in PROTOCOLS:
        _, body = request_for(protocol, False, turns=2)
        view = chat_view(protocol, body)
        assert reply_count(protocol, body) == 2
        assert view["messages"][0] == {"role": "user", "content": "Rebuild the page in brief.md"}
    items = [
        {"role": "user", "content": [{"type": "input_text", "text": "task"}]},
        {"type": "reasoning", "summary": []},
        {"type": "function_call", "name": "bash"},
        {"type": "function_call_output", "output": "ok"},
    ]
    assert reply_count("responses", {"input": items}) == 1
