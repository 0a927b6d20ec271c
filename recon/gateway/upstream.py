"""What the gateway forwards a call to: the interface, and the scripted and replay upstreams.

An upstream gets the call as the gateway prepared it (:class:`Outgoing`: credential-free
headers, the body to send) and answers a :class:`Reply` whose body arrives in chunks. It
raises :class:`Dropped` when no answer came (retried) and :class:`Refused` when the
harness cannot go on (not retried: a replay that no longer fits, an untrusted certificate).
The live upstream is :mod:`recon.gateway.live`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from recon.gateway import replies
from recon.gateway.conversation import chat_view, reply_count
from recon.gateway.credential import Credential
from recon.gateway.protocols import Call
from recon.gateway.sse import encode
from recon.model.gateway import Exchange, Usage
from recon.model.gateway import Protocol as Api


class Dropped(Exception):
    """The upstream gave no answer (connection refused, reset, timed out)."""


class Refused(Exception):
    """The call cannot be answered and retrying would not help: a harness failure."""


@dataclass(frozen=True)
class Outgoing:
    call: Call
    number: int
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: dict[str, Any]
    raw: bytes | None = None
    """``body``'s bytes as the agent sent them, when they go upstream unchanged."""

    def data(self) -> bytes:
        return self.raw if self.raw is not None else json.dumps(self.body).encode()


async def _nothing() -> None:
    return None


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    chunks: AsyncIterator[bytes]
    release: Callable[[], Awaitable[None]] = field(default=_nothing)

    @property
    def streamed(self) -> bool:
        kind = self.headers.get("content-type", "")
        return self.status == 200 and kind.startswith("text/event-stream")


UpstreamKind = Literal["live", "scripted", "replay"]


class Upstream(Protocol):
    @property
    def kind(self) -> UpstreamKind: ...

    @property
    def credential(self) -> Credential | None:
        """The key this upstream adds (live only): what the gateway scrubs and names."""
        ...

    async def send(self, out: Outgoing) -> Reply: ...

    async def close(self) -> None: ...


class Script(Protocol):
    """``recon.agents.Script``: a reply from the chat conversation alone."""

    def reply(self, request: dict[str, Any]) -> str | None: ...


class ToolCallLike(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def input(self) -> dict[str, Any]: ...


class ToolReplyLike(Protocol):
    @property
    def text(self) -> str: ...
    @property
    def calls(self) -> tuple[ToolCallLike, ...]: ...


class ToolScript(Protocol):
    """``recon.agents.tool_script.ToolScripts``: a reply with tool calls, from the request
    alone; None when the request is not an agent's with tools it knows."""

    def reply(self, protocol: str, body: Mapping[str, Any]) -> ToolReplyLike | None: ...


async def _chunks(parts: list[bytes]) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def buffered_reply(status: int, headers: dict[str, str], data: bytes) -> Reply:
    """A reply whose body is already read."""
    return Reply(status, headers, _chunks([data]))


def json_reply(status: int, body: Any) -> Reply:
    data = json.dumps(body).encode() if not isinstance(body, str) else body.encode()
    return Reply(status, {"content-type": "application/json"}, _chunks([data]))


def sse_reply(parts: list[bytes]) -> Reply:
    return Reply(200, {"content-type": "text/event-stream"}, _chunks(parts))


def scripted_usage(protocol: Api, body: dict[str, Any], text: str) -> Usage:
    """The scripted model's usage: a function of the request and reply alone, with every
    count the protocol reports set, so metering is tested field by field."""
    turn = reply_count(protocol, body)
    size = len(json.dumps(body, sort_keys=True))
    reasoning = 0 if protocol == "anthropic" else 3
    return Usage(
        input=size // 4 + 1,
        output=len(text) // 4 + 1 + reasoning,
        cache_read=50 * turn,
        cache_write=30 if protocol == "anthropic" and turn == 0 else 0,
        reasoning=reasoning,
    )


def scripted_answer(
    script: Script,
    call: Call,
    body: dict[str, Any],
    number: int,
    tools: ToolScript | None = None,
) -> Reply:
    """The scripted model's reply to one call, in its protocol's shape: from ``tools`` when
    it knows the request's agent, else the text ``script``'s."""
    said = tools.reply(call.protocol, body) if tools and call.endpoint == "generate" else None
    if said is not None:
        uses = [(c.id, c.name, dict(c.input)) for c in said.calls]
        spoken = json.dumps({"text": said.text, "calls": uses}, sort_keys=True)
        used = scripted_usage(call.protocol, body, spoken)
        if not call.stream:
            return json_reply(200, replies.tool_body(call, said.text, uses, used, number))
        events = replies.tool_events(call, said.text, uses, used, number)
        return sse_reply([encode(e) for e in events])
    text = script.reply(chat_view(call.protocol, body))
    if text is None:
        message = "scripted model: no script for this task (no known brief title in it)"
        return json_reply(404, {"error": {"message": message}})
    usage = scripted_usage(call.protocol, body, text)
    if not call.stream:
        return json_reply(200, replies.body(call, text, usage, number))
    return sse_reply([encode(e) for e in replies.events(call, text, usage, number)])


@dataclass
class ScriptedUpstream:
    """The scripted model, in process: no socket between the gateway and it."""

    script: Script
    kind: UpstreamKind = "scripted"
    credential: Credential | None = None
    tools: ToolScript | None = None

    async def send(self, out: Outgoing) -> Reply:
        return scripted_answer(self.script, out.call, out.body, out.number, self.tools)

    async def close(self) -> None:
        return None


@dataclass
class ReplayUpstream:
    """Answers an attempt's recorded exchanges in order; a call that does not fit the
    recorded one (other endpoint or model, another turn of the conversation, more calls)
    is :class:`Refused`, naming the turn."""

    exchanges: list[Exchange]
    kind: UpstreamKind = "replay"
    credential: Credential | None = None
    _next: int = 0

    @classmethod
    def of(cls, exchanges: list[Exchange]) -> ReplayUpstream:
        kept = [e for e in exchanges if e.refused is None and e.tries]
        return cls(sorted(kept, key=lambda e: e.turn))

    async def send(self, out: Outgoing) -> Reply:
        self._next += 1
        turn = self._next
        if turn > len(self.exchanges):
            raise Refused(
                f"replay: turn {turn}: the recording holds {len(self.exchanges)} calls; "
                "the agent made more"
            )
        recorded = self.exchanges[turn - 1]
        problem = diverges(recorded, out)
        if problem is not None:
            raise Refused(f"replay: turn {turn}: {problem}")
        return _recorded_reply(recorded)

    async def close(self) -> None:
        return None


def diverges(recorded: Exchange, out: Outgoing) -> str | None:
    """How a call differs from the recorded one, or None when it fits."""
    call = out.call
    asked = (call.protocol, call.endpoint, call.stream)
    held = (recorded.protocol, recorded.endpoint, recorded.stream)
    if asked != held:
        return f"asks {asked}, the recording holds {held}"
    if call.model != recorded.model:
        return f"asks model {call.model!r}, the recording holds {recorded.model!r}"
    now = reply_count(call.protocol, out.body)
    then = (
        reply_count(recorded.protocol, recorded.request)
        if isinstance(recorded.request, dict)
        else 0
    )
    if now != then:
        return f"the conversation holds {now} replies, the recorded one {then}"
    return None


def _recorded_reply(recorded: Exchange) -> Reply:
    headers = dict(recorded.response_headers)
    if recorded.events is not None:
        return Reply(recorded.status, headers, _chunks([encode(e) for e in recorded.events]))
    return Reply(recorded.status, headers, _chunks([(recorded.body or "").encode()]))
