"""Transcript pages (``transcripts/<attempt>.html``): a gateway attempt, turn by turn.

:func:`transcript` reads the attempt's recording into a bounded
:class:`~recon.model.transcript.Transcript`: per call, what the agent sent since the model's
last reply, the model's text, its tool calls (name and arguments) with their results (the
next request's tool-result content), the call's tokens and cost, a refusal, and at the end
the gateway's outcome. Timings are left out: they are run metadata (two runs of the same
attempt differ in them, and the site must be byte-identical between builds of the same
inputs); the recording in the store keeps them. A body longer than :data:`BODY_CHARS` is
cut, a turn holds at most :data:`CALLS` tool calls, and once :data:`PAGE_CHARS` characters
are shown the remaining turns are left out, each with a visible note and a count.

The recording holds nothing sealed (the agent never sees sealed material) and no key (the
gateway scrubs it); the page shows only what :func:`recon.site.allow.public` lets through,
escaped as text.
"""

from __future__ import annotations

from typing import Any

from recon.gateway.conversation import chat_view
from recon.gateway.turns import answered, reply, results
from recon.model.gateway import Exchange, Recording
from recon.model.transcript import Body, ToolUse, Transcript, Turn
from recon.site.allow import public

BODY_CHARS = 4000
CALLS = 32
PAGE_CHARS = 400_000


def body(text: str, limit: int = BODY_CHARS) -> Body:
    return Body(text=text[:limit], chars=len(text))


def _sent(exchange: Exchange) -> str:
    """The user messages after the model's last reply (tool results are the calls')."""
    if not isinstance(exchange.request, dict):
        return ""
    messages = chat_view(exchange.protocol, exchange.request)["messages"]
    last = max((n for n, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    return "\n\n".join(m["content"] for m in messages[last + 1 :] if m["role"] == "user")


def _turn(exchange: Exchange, following: Exchange | None) -> Turn:
    said = reply(exchange.protocol, exchange.message)
    found = results(following.protocol, following.request) if following is not None else []
    outcome = answered(said.calls, found)
    calls = [
        ToolUse(name=c.name, arguments=body(c.arguments), result=None if r is None else body(r))
        for c, r in list(zip(said.calls, outcome, strict=True))[:CALLS]
    ]
    return Turn(
        turn=exchange.turn,
        protocol=exchange.protocol,
        endpoint=exchange.endpoint,
        model=exchange.model,
        stream=exchange.stream,
        status=exchange.status,
        sent=body(_sent(exchange)),
        text=body(said.text),
        calls=calls,
        calls_left_out=len(said.calls) - len(calls),
        usage=exchange.usage,
        cost_usd=exchange.cost_usd,
        refused=exchange.refused,
    )


def _shown(turn: Turn) -> int:
    bodies = [turn.sent, turn.text] + [b for c in turn.calls for b in (c.arguments, c.result) if b]
    return sum(len(b.text) for b in bodies)


def _next_generate(exchanges: list[Exchange], index: int) -> Exchange | None:
    """The next answered call that generates: the request that carries this one's results."""
    later = exchanges[index + 1 :]
    return next((e for e in later if e.endpoint == "generate" and e.refused is None), None)


def transcript(recording: Recording) -> Transcript:
    turns: list[Turn] = []
    shown = 0
    exchanges = recording.exchanges
    for index, exchange in enumerate(exchanges):
        if shown >= PAGE_CHARS:
            break
        turn = _turn(exchange, _next_generate(exchanges, index))
        turns.append(turn)
        shown += _shown(turn)
    return Transcript(
        upstream=recording.upstream,
        prices_digest=recording.prices_digest,
        usage=recording.usage,
        cost_usd=recording.cost_usd,
        outcome=recording.outcome,
        turns=turns,
        turns_left_out=len(exchanges) - len(turns),
    )


def transcript_page(attempt: dict[str, Any], made: Transcript) -> dict[str, Any]:
    """The context of ``transcript.html``: the attempt's public line and its transcript."""
    return {"attempt": attempt, "transcript": public(made)}
