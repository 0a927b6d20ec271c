"""The scripted model as a server of its own, speaking every protocol the gateway does.

The gateway's ``scripted`` upstream answers in process (:class:`ScriptedUpstream`); this
server gives the same answers over HTTP, for a client or a gateway that reaches the
scripted model directly (the latency bench's baseline, an agent run without a gateway).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from recon.gateway.protocols import identify
from recon.gateway.running import serving
from recon.gateway.upstream import Script, scripted_answer


@dataclass(frozen=True)
class ScriptedServer:
    port: int | None
    socket: Path | None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def scripted_app(script: Script) -> web.Application:
    counter = iter(range(1, 1 << 62))

    async def answer(request: web.Request) -> web.StreamResponse:
        try:
            body = json.loads(await request.read())
        except ValueError:
            body = None
        call = identify(request.path, request.query, body)
        if call is None or not isinstance(body, dict):
            return web.json_response({"error": {"message": f"no route {request.path}"}}, status=404)
        reply = scripted_answer(script, call, body, next(counter))
        response = web.StreamResponse(status=reply.status, headers=reply.headers)
        await response.prepare(request)
        async for chunk in reply.chunks:
            await response.write(chunk)
        await response.write_eof()
        return response

    application = web.Application(client_max_size=64 * 1024 * 1024)
    application.router.add_post("/{tail:.*}", answer)
    return application


async def _nothing() -> None:
    return None


@contextmanager
def serve_scripted(
    script: Script, socket: Path | None = None, tcp: bool = True
) -> Iterator[ScriptedServer]:
    """The scripted model on 127.0.0.1 (a free port) and/or a unix socket, until the block
    ends. It takes no key: it holds nothing to protect."""
    with serving(scripted_app(script), socket, tcp, _nothing) as (_, port):
        yield ScriptedServer(port, socket)
