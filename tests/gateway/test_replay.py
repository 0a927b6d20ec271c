"""Replay answers a recording's exchanges identically; a call that diverges names its turn.
Streamed replies reach the agent as they arrive."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from recon.gateway.credential import Credential
from recon.gateway.running import serve_gateway
from recon.gateway.upstream import (
    Outgoing,
    ReplayUpstream,
    Reply,
    ScriptedUpstream,
    UpstreamKind,
    scripted_answer,
)
from recon.model.base import load_json
from recon.model.gateway import Recording
from tests.gateway.conftest import SCRIPT, Answer, auth, config, connect, post, request_for

CALLS = [("anthropic", True, 0), ("anthropic", False, 1), ("anthropic", True, 2)]


def _run(
    upstream: object, calls: list[tuple[str, bool, int, str | None]]
) -> tuple[list[Answer], Recording]:
    answers = []
    with serve_gateway(config(upstream), tcp=True) as gateway:
        for protocol, stream, turns, model in calls:
            path, body = request_for(protocol, stream, turns, model)
            answers.append(post(gateway.port or 0, path, body, auth(protocol, gateway.token)))
        return answers, gateway.recording()


def _recorded(tmp_path: Path) -> tuple[list[Answer], Recording]:
    answers, recording = _run(ScriptedUpstream(SCRIPT), [(*c, None) for c in CALLS])
    stored = tmp_path / "recording.json"
    stored.write_text(recording.model_dump_json())
    return answers, load_json(Recording, stored)


def test_a_replay_answers_byte_for_byte(tmp_path: Path) -> None:
    answers, recording = _recorded(tmp_path)
    replayed, again = _run(ReplayUpstream.of(recording.exchanges), [(*c, None) for c in CALLS])
    assert [a.data for a in replayed] == [a.data for a in answers]
    assert [a.status for a in replayed] == [200, 200, 200]
    assert again.usage == recording.usage and again.cost_usd == recording.cost_usd
    assert again.outcome is None and again.upstream == "replay"


def test_another_model_fails_naming_the_turn(tmp_path: Path) -> None:
    _, recording = _recorded(tmp_path)
    calls = [(*CALLS[0], None), (*CALLS[1], "claude-haiku-4-5")]
    answers, again = _run(ReplayUpstream.of(recording.exchanges), calls)
    assert [a.status for a in answers] == [200, 400]
    assert again.outcome is not None and again.outcome.kind == "harness_failure"
    assert again.outcome.reason == (
        "replay: turn 2: asks model 'claude-haiku-4-5', the recording holds 'claude-sonnet-4-5'"
    )


def test_more_turns_than_recorded_fail_naming_the_turn(tmp_path: Path) -> None:
    _, recording = _recorded(tmp_path)
    calls = [(*c, None) for c in CALLS] + [("anthropic", False, 3, None)]
    answers, again = _run(ReplayUpstream.of(recording.exchanges), calls)
    assert answers[-1].status == 400
    assert again.outcome is not None
    assert again.outcome.reason.startswith("replay: turn 4: the recording holds 3 calls")


def test_a_skipped_turn_fails_naming_it(tmp_path: Path) -> None:
    _, recording = _recorded(tmp_path)
    calls = [(*CALLS[0], None), ("anthropic", True, 2, None)]
    _, again = _run(ReplayUpstream.of(recording.exchanges), calls)
    assert again.outcome is not None
    assert again.outcome.reason.startswith("replay: turn 2: asks ('anthropic', 'generate', True)")


@dataclass
class Gated:
    """The scripted model, holding back all but its first event until the gate opens."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)
    kind: UpstreamKind = "scripted"
    credential: Credential | None = None

    async def send(self, out: Outgoing) -> Reply:
        reply = scripted_answer(SCRIPT, out.call, out.body, out.number)
        parts = [chunk async for chunk in reply.chunks]

        async def chunks() -> AsyncIterator[bytes]:
            yield parts[0]
            await self.gate.wait()
            for part in parts[1:]:
                yield part

        return Reply(reply.status, reply.headers, chunks())

    async def close(self) -> None:
        return None


def test_events_reach_the_agent_as_they_arrive() -> None:
    upstream = Gated()
    path, body = request_for("anthropic", True)
    with serve_gateway(config(upstream), tcp=True) as gateway:
        connection = connect(gateway.port or 0)
        connection.request(
            "POST", path, body=json.dumps(body), headers=auth("anthropic", gateway.token)
        )
        response = connection.getresponse()
        first = b"".join(iter(response.readline, b"\n"))
        assert first.startswith(b"event: message_start\n"), "the first event came before the rest"
        gateway._loop.call_soon_threadsafe(upstream.gate.set)
        rest = response.read()
        connection.close()
    assert rest.rstrip().endswith(b'data: {"type":"message_stop"}')


def test_an_agent_that_hangs_up_mid_stream_still_has_its_call_metered() -> None:
    upstream = Gated()
    path, body = request_for("anthropic", True)
    with serve_gateway(config(upstream), tcp=True) as gateway:
        connection = connect(gateway.port or 0)
        connection.request(
            "POST", path, body=json.dumps(body), headers=auth("anthropic", gateway.token)
        )
        response = connection.getresponse()
        response.readline()
        connection.close()
        response.close()
        gateway._loop.call_soon_threadsafe(upstream.gate.set)
        attempt = gateway._attempt
    (exchange,) = attempt.recording().exchanges
    assert exchange.usage is not None and exchange.usage.output > 0
    assert exchange.events is not None and exchange.events[-1].event == "message_stop"
