"""The gateway's HTTP side on aiohttp: authenticate, forward with retries, relay, record.

Every decision is made elsewhere (:class:`recon.gateway.attempt.Attempt`, the protocol,
usage and failure modules); this module moves bytes. A streamed reply is relayed event by
event as it arrives, each event scrubbed of the credential and written as
:func:`recon.gateway.sse.encode` writes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from aiohttp import web

from recon.gateway.assemble import assemble
from recon.gateway.attempt import Attempt, Draft
from recon.gateway.failures import backoff, classify, credentials_rejected, error_body, exhausted
from recon.gateway.protocols import (
    forwarded_headers,
    identify,
    kept_response_headers,
    upstream_body,
    upstream_query,
)
from recon.gateway.sse import SseParser, encode
from recon.gateway.upstream import Dropped, Outgoing, Refused, Reply, buffered_reply
from recon.gateway.usage import from_body, from_events
from recon.model.gateway import Protocol, SseEvent, Try

log = logging.getLogger("recon.gateway")
ATTEMPT = web.AppKey("attempt", Attempt)
MAX_BODY = 64 * 1024 * 1024


def app(attempt: Attempt) -> web.Application:
    application = web.Application(client_max_size=MAX_BODY)
    application[ATTEMPT] = attempt
    application.router.add_route("*", "/{tail:.*}", handle)
    return application


def _ms(since: float) -> float:
    return round((time.monotonic() - since) * 1000, 3)


def _guess(path: str) -> Protocol:
    """The protocol whose error shape a refused request gets."""
    if path.startswith("/v1/messages"):
        return "anthropic"
    return "gemini" if "/models/" in path else "chat"


def refuse(protocol: Protocol, status: int, message: str) -> web.Response:
    return web.json_response(error_body(protocol, status, message), status=status)


def _parse(data: bytes) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return None


async def handle(request: web.Request) -> web.StreamResponse:
    attempt = request.app[ATTEMPT]
    started = time.monotonic()
    if not attempt.authorized(request.headers, request.query):
        return refuse(_guess(request.path), 401, "recon gateway: unknown or revoked attempt token")
    raw = await request.read()
    body = _parse(raw)
    call = identify(request.path, request.query, body) if request.method == "POST" else None
    if call is None:
        message = f"recon gateway: no model API at {request.method} {request.path}"
        return refuse(_guess(request.path), 404, message)
    sent = upstream_body(call, body)
    draft = Draft(
        call,
        attempt.next_number(),
        request.path,
        forwarded_headers(request.headers),
        sent,
        round(started - attempt.started, 3),
        raw if sent is body else None,
    )
    refused = attempt.refusal(call)
    if refused is not None:
        attempt.record(
            draft.exchange(status=400, response_headers={}, refused=refused, total_ms=_ms(started))
        )
        return refuse(call.protocol, 400, f"recon gateway: {refused}")
    return await _call(request, attempt, draft, started)


async def _call(
    request: web.Request, attempt: Attempt, draft: Draft, started: float
) -> web.StreamResponse:
    call = draft.call
    out = Outgoing(
        call,
        draft.number,
        request.path,
        upstream_query(request.query),
        draft.request_headers,
        draft.request,
        draft.raw,
    )
    tries: list[Try] = []
    reply = await forward(attempt, out, tries)
    if reply is None:
        reason = attempt.outcome.reason if attempt.outcome else "the model API failed"
        attempt.record(
            draft.exchange(
                status=400, response_headers={}, tries=tries, refused=reason, total_ms=_ms(started)
            )
        )
        return refuse(call.protocol, 400, f"recon gateway: {reason}")
    try:
        relay = _relay_stream if reply.streamed else _relay_body
        return await relay(request, attempt, draft, reply, tries, started)
    finally:
        await reply.release()


async def forward(attempt: Attempt, out: Outgoing, tries: list[Try]) -> Reply | None:
    """The upstream's reply, retried per :mod:`recon.gateway.failures`; None when the
    attempt stopped instead (its outcome says why)."""
    policy = attempt.config.retry
    for n in range(1, policy.tries + 1):
        sent = time.monotonic()
        reply, retry_after = None, None
        try:
            reply = await _buffered(await attempt.config.upstream.send(out))
        except Dropped as err:
            tries.append(Try(error=attempt.scrub(str(err)), ms=_ms(sent)))
        except Refused as err:
            tries.append(Try(error=attempt.scrub(str(err)), ms=_ms(sent)))
            attempt.stop("harness_failure", attempt.scrub(str(err)))
            return None
        else:
            tries.append(Try(status=reply.status, ms=_ms(sent)))
            verdict = classify(reply.status)
            if verdict in ("ok", "pass"):
                return reply
            retry_after = reply.headers.get("retry-after")
            await reply.release()
            if verdict == "credentials":
                attempt.stop(
                    "harness_failure", credentials_rejected(attempt.credential_name(), reply.status)
                )
                return None
        log.info("turn %d: upstream try %d failed (%s)", out.number, n, tries[-1].status)
        if n < policy.tries:
            await asyncio.sleep(backoff(policy, n, retry_after))
    attempt.stop("harness_failure", exhausted(tries))
    return None


async def _buffered(reply: Reply) -> Reply:
    """A reply that is not streamed, read whole: a connection that drops while it is read
    is retried like one that gave no answer (the agent has seen nothing yet)."""
    if reply.streamed:
        return reply
    try:
        data = b"".join([chunk async for chunk in reply.chunks])
    finally:
        await reply.release()
    return buffered_reply(reply.status, reply.headers, data)


def _headers(attempt: Attempt, reply: Reply) -> dict[str, str]:
    return {k: attempt.scrub(v) for k, v in kept_response_headers(reply.headers).items()}


async def _relay_body(
    request: web.Request,
    attempt: Attempt,
    draft: Draft,
    reply: Reply,
    tries: list[Try],
    started: float,
) -> web.StreamResponse:
    data = b"".join([chunk async for chunk in reply.chunks])
    text = attempt.scrub(data.decode("utf-8", errors="replace"))
    message = _parse(text.encode())
    usage = from_body(draft.call.protocol, message) if reply.status == 200 else None
    headers = _headers(attempt, reply)
    cost = attempt.metered(draft.call, usage) if reply.status == 200 else None
    _done(
        attempt,
        draft,
        started,
        status=reply.status,
        response_headers=headers,
        body=text,
        message=message,
        usage=usage,
        cost_usd=cost,
        tries=tries,
    )
    return web.Response(status=reply.status, body=text.encode(), headers=headers)


async def _relay_stream(
    request: web.Request,
    attempt: Attempt,
    draft: Draft,
    reply: Reply,
    tries: list[Try],
    started: float,
) -> web.StreamResponse:
    headers = _headers(attempt, reply)
    relay = _Relay(web.StreamResponse(status=reply.status, headers=headers), attempt)
    await relay.response.prepare(request)
    parser, first = SseParser(), None
    try:
        async for chunk in reply.chunks:
            first = first if first is not None else _ms(started)
            await relay.write(parser.feed(chunk))
        await relay.write(parser.close())
    except Dropped as err:
        attempt.stop("harness_failure", f"turn {draft.number}: {err}")
    usage = from_events(draft.call.protocol, relay.events)
    cost = attempt.metered(draft.call, usage)
    await relay.close()
    _done(
        attempt,
        draft,
        started,
        status=reply.status,
        response_headers=headers,
        events=relay.events,
        message=assemble(draft.call.protocol, relay.events),
        usage=usage,
        cost_usd=cost,
        tries=tries,
        first_byte_ms=first,
    )
    return relay.response


class _Relay:
    """Writes each event to the agent as it comes; an agent that hung up gets no more, but
    the upstream's reply is still read to its end, so the call is metered and recorded."""

    def __init__(self, response: web.StreamResponse, attempt: Attempt) -> None:
        self.response, self.attempt = response, attempt
        self.events: list[SseEvent] = []
        self.gone = False

    async def write(self, events: list[SseEvent]) -> None:
        """The events one upstream chunk completed, in one write."""
        clean = [self._clean(e) for e in events]
        self.events += clean
        if clean and not self.gone:
            try:
                await self.response.write(b"".join(encode(e) for e in clean))
            except ConnectionError:
                self.gone = True

    def _clean(self, event: SseEvent) -> SseEvent:
        data = self.attempt.scrub(event.data)
        return event if data == event.data else SseEvent(event=event.event, data=data)

    async def close(self) -> None:
        if not self.gone:
            with contextlib.suppress(ConnectionError):
                await self.response.write_eof()


def _done(attempt: Attempt, draft: Draft, started: float, **fields: Any) -> None:
    exchange = draft.exchange(total_ms=_ms(started), **fields)
    attempt.record(exchange)
    tokens = exchange.usage.tokens if exchange.usage else None
    log.info(
        "turn %d: %s %s -> %d (%s tokens)",
        draft.number,
        draft.call.protocol,
        draft.call.model,
        exchange.status,
        tokens,
    )
