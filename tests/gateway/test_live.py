"""The live upstream: TLS verified against a test CA, the real key added upstream and found
nowhere else, failures classified and retried at the gateway."""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from recon.errors import ConfigError, HarnessError
from recon.gateway.credential import Credential
from recon.gateway.live import LiveUpstream, base_url
from recon.gateway.meter import Limits
from recon.gateway.running import serve_gateway
from recon.gateway.scripted import serve_scripted
from recon.gateway.sse import encode
from recon.gateway.upstream import (
    Outgoing,
    Reply,
    ScriptedUpstream,
    UpstreamKind,
    buffered_reply,
    scripted_answer,
    scripted_usage,
)
from recon.gateway.usage import from_body, from_events
from recon.model.gateway import Recording, SseEvent
from tests.gateway.conftest import (
    SCRIPT,
    Answer,
    CertAuthority,
    Vendor,
    auth,
    config,
    post,
    request_for,
    vendor_api,
)

CANARY = "sk-ant-canary-7f3e9b1c2d4a5e6f"
KEY = Credential("ANTHROPIC_API_KEY", CANARY)


def _live(vendor: Vendor, scheme: str = "http", ca_bundle: Path | None = None) -> LiveUpstream:
    return LiveUpstream(f"{scheme}://127.0.0.1:{vendor.port}", KEY, ca_bundle)


def _call(upstream: LiveUpstream, stream: bool = False) -> tuple[Answer, Recording]:
    path, body = request_for("anthropic", stream)
    with serve_gateway(config(upstream), tcp=True) as gateway:
        answer = post(gateway.port or 0, path, body, auth("anthropic", gateway.token))
        return answer, gateway.recording()


@pytest.mark.parametrize("stream", [False, True], ids=["json", "sse"])
def test_live_over_tls_with_the_test_ca(
    test_ca: CertAuthority, server_tls: ssl.SSLContext, stream: bool
) -> None:
    with vendor_api(Vendor(), server_tls) as vendor:
        answer, recording = _call(_live(vendor, "https", ca_bundle=test_ca.ca), stream)
    assert answer.status == 200, answer.data
    assert recording.outcome is None and recording.usage.tokens > 0
    assert vendor.headers[0]["x-api-key"] == CANARY


def test_an_unknown_ca_is_refused_as_a_harness_failure(server_tls: ssl.SSLContext) -> None:
    with vendor_api(Vendor(), server_tls) as vendor:
        answer, recording = _call(_live(vendor, "https"))
    assert answer.status == 400 and vendor.headers == []
    assert recording.outcome is not None and recording.outcome.kind == "harness_failure"
    assert "TLS certificate is not trusted" in recording.outcome.reason
    assert len(recording.exchanges[0].tries) == 1


@pytest.mark.parametrize("first", [429, 529])
def test_429_and_529_are_retried_and_the_attempt_is_valid(first: int) -> None:
    with vendor_api(Vendor([first])) as vendor:
        answer, recording = _call(_live(vendor))
    assert answer.status == 200 and recording.outcome is None
    assert [t.status for t in recording.exchanges[0].tries] == [first, 200]


def test_a_dropped_connection_is_retried() -> None:
    with vendor_api(Vendor([0, -1])) as vendor:
        answer, recording = _call(_live(vendor))
    assert answer.status == 200 and recording.outcome is None
    tries = recording.exchanges[0].tries
    assert [t.status for t in tries] == [None, None, 200]
    assert all(t.error for t in tries[:2])


def test_a_stream_that_drops_midway_is_a_harness_failure() -> None:
    with vendor_api(Vendor([-2])) as vendor:
        answer, recording = _call(_live(vendor), stream=True)
    assert answer.status == 200 and [e.event for e in answer.events] == ["ping"]
    assert recording.outcome is not None and recording.outcome.kind == "harness_failure"
    assert recording.outcome.reason.startswith("turn 1: the model API dropped the response")
    assert len(vendor.headers) == 1


def test_5xx_until_the_tries_are_used_up_is_a_harness_failure() -> None:
    with vendor_api(Vendor([500, 503, 502, 500])) as vendor:
        answer, recording = _call(_live(vendor))
    assert answer.status == 400 and "model API unavailable: 3 tries failed" in answer.data.decode()
    assert recording.outcome is not None and recording.outcome.kind == "harness_failure"
    assert recording.outcome.reason == (
        "model API unavailable: 3 tries failed (500, 503, 502); retried per protocol"
    )
    assert len(vendor.headers) == 3


def test_401_is_one_credentials_rejected_failure_naming_the_variable() -> None:
    with vendor_api(Vendor([401, 401])) as vendor:
        answer, recording = _call(_live(vendor))
    assert len(vendor.headers) == 1, "not retried"
    assert recording.outcome is not None
    assert recording.outcome.reason.startswith("credentials rejected")
    assert "ANTHROPIC_API_KEY" in recording.outcome.reason
    assert "credentials rejected" in answer.json["error"]["message"]


def test_a_400_of_the_agents_own_request_is_passed_through() -> None:
    with vendor_api(Vendor([400])) as vendor:
        answer, recording = _call(_live(vendor))
    assert answer.status == 400 and answer.json == {"error": {"message": "status 400 for key "}}
    assert recording.outcome is None and len(vendor.headers) == 1
    assert recording.exchanges[0].usage is None


def test_the_canary_key_is_never_in_recordings_logs_or_replies(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    seen: list[bytes] = []
    with vendor_api(Vendor([400, 529], echo_key=True)) as vendor:
        for stream in (False, False, True):
            answer, recording = _call(_live(vendor), stream)
            seen += [
                answer.data,
                repr(answer.headers).encode(),
                recording.model_dump_json().encode(),
            ]
    assert all(h["x-api-key"] == CANARY for h in vendor.headers), "the key went upstream"
    assert b"[credential]" in seen[0], "the vendor's echo of the key was scrubbed"
    assert not any(CANARY.encode() in blob for blob in seen)
    assert "turn 1: anthropic" in caplog.text and CANARY not in caplog.text
    assert CANARY not in repr(KEY)


def test_over_the_token_budget_further_calls_are_refused() -> None:
    path, body = request_for("chat", False)
    limits = Limits(tokens=1)
    with serve_gateway(config(ScriptedUpstream(SCRIPT), limits=limits), tcp=True) as gateway:
        first = post(gateway.port or 0, path, body, auth("chat", gateway.token))
        second = post(gateway.port or 0, path, body, auth("chat", gateway.token))
        recording = gateway.recording()
    assert first.status == 200 and second.status == 400
    assert "token budget spent" in second.json["error"]["message"]
    assert recording.outcome is not None and recording.outcome.kind == "budget"
    assert recording.outcome.reason.startswith("token budget spent: ")
    assert [e.refused is None for e in recording.exchanges] == [True, False]


def test_an_unpriced_model_under_a_cost_budget_is_refused_before_any_call() -> None:
    path, body = request_for("chat", False, model="no-such-model")
    limits = Limits(cost_usd=1.0)
    with serve_gateway(config(ScriptedUpstream(SCRIPT), limits=limits), tcp=True) as gateway:
        answer = post(gateway.port or 0, path, body, auth("chat", gateway.token))
        outcome = gateway.outcome()
    assert answer.status == 400 and outcome is not None
    assert "no price in recon/gateway/prices.json" in outcome.reason


def test_credentials_and_base_urls_are_checked_at_start() -> None:
    with pytest.raises(HarnessError, match="credentials missing: ANTHROPIC_API_KEY"):
        Credential.from_env("ANTHROPIC_API_KEY", {})
    with pytest.raises(ConfigError, match="must be https"):
        base_url("http://api.anthropic.com")
    assert str(base_url("http://127.0.0.1:9")) == "http://127.0.0.1:9"


def test_upstream_connections_are_kept_alive() -> None:
    path, body = request_for("chat", True)
    with vendor_api(Vendor()) as vendor:
        upstream = LiveUpstream(f"http://127.0.0.1:{vendor.port}", KEY)
        with serve_gateway(config(upstream), tcp=True) as gateway:
            for _ in range(3):
                assert (
                    post(gateway.port or 0, path, body, auth("chat", gateway.token)).status == 200
                )
    assert len(vendor.peers) == 3 and len(set(vendor.peers)) == 1


def test_the_scripted_server_speaks_every_protocol_directly() -> None:
    with serve_scripted(SCRIPT) as server:
        for protocol in ("anthropic", "responses", "chat", "gemini"):
            for stream in (False, True):
                path, body = request_for(protocol, stream)
                answer = post(server.port or 0, path, body, {})
                assert answer.status == 200
                usage = (
                    from_events(protocol, answer.events)
                    if stream
                    else from_body(protocol, answer.json)
                )
                assert usage == scripted_usage(protocol, body, SCRIPT.replies[0])
        assert post(server.port or 0, "/v1/embeddings", {"model": "x"}, {}).status == 404


def test_the_agents_body_goes_upstream_as_sent_unless_usage_must_be_asked_for() -> None:
    anthropic_path, anthropic_body = request_for("anthropic", False)
    sent = json.dumps(anthropic_body, indent=3).encode()
    chat_path, chat_body = request_for("chat", True)
    with vendor_api(Vendor()) as vendor:
        upstream = LiveUpstream(f"http://127.0.0.1:{vendor.port}", KEY)
        with serve_gateway(config(upstream), tcp=True) as gateway:
            post(gateway.port or 0, anthropic_path, sent, auth("anthropic", gateway.token))
            post(gateway.port or 0, chat_path, chat_body, auth("chat", gateway.token))
    assert vendor.bodies[0] == sent
    assert json.loads(vendor.bodies[1])["stream_options"] == {"include_usage": True}


@dataclass
class Leaky:
    """An upstream that streams its own key back in an event, and in a header."""

    kind: UpstreamKind = "live"
    credential: Credential | None = KEY

    async def send(self, out: Outgoing) -> Reply:
        reply = scripted_answer(SCRIPT, out.call, out.body, out.number)
        leak = encode(SseEvent(event="ping", data=f'{{"type": "ping", "key": "{CANARY}"}}'))
        parts = [chunk async for chunk in reply.chunks]
        headers = {**reply.headers, "request-id": CANARY}
        return buffered_reply(200, headers, b"".join([parts[0], leak, *parts[1:]]))

    async def close(self) -> None:
        return None


def test_a_key_echoed_in_a_stream_is_scrubbed_event_by_event() -> None:
    path, body = request_for("anthropic", True)
    with serve_gateway(config(Leaky()), tcp=True) as gateway:
        answer = post(gateway.port or 0, path, body, auth("anthropic", gateway.token))
        recording = gateway.recording()
    assert answer.status == 200 and len(answer.events) == 9
    assert '"key": "[credential]"' in answer.events[1].data
    assert answer.headers["request-id"] == "[credential]"
    assert CANARY.encode() not in answer.data + recording.model_dump_json().encode()


@dataclass
class Hanging:
    """An upstream that takes a call and never answers it."""

    kind: UpstreamKind = "scripted"
    credential: None = None
    called: threading.Event = field(default_factory=threading.Event)

    async def send(self, out: Outgoing) -> Reply:
        self.called.set()
        await asyncio.Event().wait()
        raise AssertionError("never answered")

    async def close(self) -> None:
        return None


def test_a_call_in_flight_when_the_gateway_stops_is_cancelled_not_waited_on() -> None:
    """An agent killed at its time limit leaves its call hanging upstream: the gateway's
    stop cancels it (before, aiohttp waited for it and the stop timed out, so a model that
    never answered was recorded as the harness's failure, not a timeout)."""
    upstream = Hanging()
    path, body = request_for("chat", False)
    answers: list[object] = []
    with serve_gateway(config(upstream), tcp=True) as gateway:  # type: ignore[arg-type]
        port, token = gateway.port or 0, gateway.token

        def call() -> None:
            try:
                answers.append(post(port, path, body, auth("chat", token)))
            except OSError as err:  # the connection closed under the call
                answers.append(err)

        client = threading.Thread(target=call)
        client.start()
        assert upstream.called.wait(timeout=60), "the call never reached the upstream"
    client.join(timeout=60)
    assert not client.is_alive() and len(answers) == 1
    answer = answers[0]
    assert isinstance(answer, OSError) or (isinstance(answer, Answer) and answer.status >= 500)
