"""Shared gateway fixtures: the pinned prices, an HTTP client for TCP and unix sockets, a
fake vendor API on 127.0.0.1 (plain or TLS with a test CA) that answers real-shaped replies
after a programmed list of failures."""

from __future__ import annotations

import base64
import http.client
import json
import shutil
import socket
import ssl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from aiohttp import web

from recon.agents import FixedScript, Script
from recon.gateway.attempt import GatewayConfig
from recon.gateway.failures import RetryPolicy
from recon.gateway.prices import PRICES, load_prices, prices_digest
from recon.gateway.protocols import identify
from recon.gateway.running import serving
from recon.gateway.sse import SseParser
from recon.gateway.upstream import ToolScript, Upstream, scripted_answer
from recon.model.gateway import PriceTable, SseEvent

SCRIPT = FixedScript(
    ["THOUGHT: look.\n\n```bash\nls\n```", "THOUGHT: done.\n\n```bash\necho ok\n```"]
)
FAST = RetryPolicy(tries=3, base_s=0.0, cap_s=0.0)
TABLE: PriceTable = load_prices(PRICES)

MODELS = {
    "anthropic": "claude-sonnet-4-5",
    "responses": "gpt-5",
    "chat": "gpt-4o",
    "gemini": "gemini-2.5-pro",
}


def request_for(
    protocol: str, stream: bool, turns: int = 0, model: str | None = None
) -> tuple[str, dict[str, Any]]:
    """A path and body in ``protocol``'s shape: a task, then ``turns`` replies and answers."""
    model = model or MODELS[protocol]
    task, reply, answer = "Rebuild the page in brief.md", "THOUGHT: look.", "output: ok"
    if protocol == "gemini":
        contents = [{"role": "user", "parts": [{"text": task}]}]
        for _ in range(turns):
            contents += [
                {"role": "model", "parts": [{"text": reply}]},
                {"role": "user", "parts": [{"text": answer}]},
            ]
        verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
        return f"/v1beta/models/{model}:{verb}", {"contents": contents}
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    for _ in range(turns):
        messages += [{"role": "assistant", "content": reply}, {"role": "user", "content": answer}]
    if protocol == "responses":
        return "/v1/responses", {"model": model, "input": messages, "stream": stream}
    path = "/v1/messages" if protocol == "anthropic" else "/v1/chat/completions"
    return path, {"model": model, "max_tokens": 1024, "messages": messages, "stream": stream}


def auth(protocol: str, token: str) -> dict[str, str]:
    if protocol == "anthropic":
        return {"x-api-key": token, "anthropic-version": "2023-06-01"}
    if protocol == "gemini":
        return {"x-goog-api-key": token}
    return {"Authorization": f"Bearer {token}"}


def config(upstream: Upstream, **kw: Any) -> GatewayConfig:
    return GatewayConfig(
        upstream=upstream,
        prices=TABLE,
        prices_digest=prices_digest(PRICES),
        retry=kw.pop("retry", FAST),
        **kw,
    )


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    data: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.data)

    @property
    def events(self) -> list[SseEvent]:
        parser = SseParser()
        return [*parser.feed(self.data), *parser.close()]


class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("localhost", timeout=60)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(60)
        self.sock.connect(str(self.path))


def connect(where: int | Path) -> http.client.HTTPConnection:
    if isinstance(where, Path):
        return UnixConnection(where)
    return http.client.HTTPConnection("127.0.0.1", where, timeout=60)


def post(where: int | Path, path: str, body: Any, headers: dict[str, str]) -> Answer:
    """``body`` as JSON, or as given when it is already bytes."""
    connection = connect(where)
    try:
        connection.request(
            "POST",
            path,
            body=body if isinstance(body, bytes) else json.dumps(body),
            headers={"content-type": "application/json", **headers},
        )
        response = connection.getresponse()
        return Answer(
            response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
        )
    finally:
        connection.close()


def key_forms(key: bytes) -> set[bytes]:
    """``key`` as it could be written down: raw, URL-encoded, and base64 (standard and URL
    alphabets, at each of the three alignments inside a longer encoded run)."""
    found = {key, quote(key, safe="").encode()}
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + key)
        middle = encoded[-(-8 * pad // 6) : 8 * (pad + len(key)) // 6]
        found |= {middle, middle.replace(b"+", b"-").replace(b"/", b"_")}
    return found


@dataclass
class Vendor:
    """A fake vendor API: answers ``statuses`` in order (0: drop the connection, -1: drop
    it halfway through the body, -2: after a stream's first event), then real replies of
    ``script`` (or of ``tools``, for an agent with tools); keeps each request's headers."""

    statuses: list[int] = field(default_factory=list)
    echo_key: bool = False
    script: Script = SCRIPT
    tools: ToolScript | None = None
    headers: list[dict[str, str]] = field(default_factory=list)
    peers: list[object] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    port: int = 0

    def app(self) -> web.Application:
        async def answer(request: web.Request) -> web.StreamResponse:
            self.headers.append(dict(request.headers))
            assert request.transport is not None
            self.peers.append(request.transport.get_extra_info("peername"))
            self.bodies.append(await request.read())
            body = json.loads(self.bodies[-1])
            if self.statuses:
                status = self.statuses.pop(0)
                if status == 0:
                    assert request.transport is not None
                    request.transport.close()
                    return web.Response()
                if status == -1:  # the headers and half a body, then the connection drops
                    half = web.StreamResponse(
                        headers={"content-type": "application/json", "content-length": "100"}
                    )
                    await half.prepare(request)
                    await half.write(b'{"id": "msg_')
                    assert request.transport is not None
                    request.transport.close()
                    return half
                if status == -2:  # one event of a stream, then the connection drops
                    stream = web.StreamResponse(headers={"content-type": "text/event-stream"})
                    await stream.prepare(request)
                    await stream.write(b'event: ping\ndata: {"type": "ping"}\n\n')
                    assert request.transport is not None
                    request.transport.close()
                    return stream
                key = request.headers.get("x-api-key", "") if self.echo_key else ""
                error = {"error": {"message": f"status {status} for key {key}"}}
                return web.json_response(error, status=status, headers={"retry-after": "0"})
            call = identify(request.path, request.query, body)
            assert call is not None
            reply = scripted_answer(self.script, call, body, len(self.headers), self.tools)
            response = web.StreamResponse(status=reply.status, headers=reply.headers)
            await response.prepare(request)
            async for chunk in reply.chunks:
                await response.write(chunk)
            return response

        application = web.Application()
        application.router.add_post("/{tail:.*}", answer)
        return application


async def _nothing() -> None:
    return None


@contextmanager
def vendor_api(vendor: Vendor, tls: ssl.SSLContext | None = None) -> Iterator[Vendor]:
    if tls is None:
        with serving(vendor.app(), None, True, _nothing) as (_, port):
            vendor.port = port or 0
            yield vendor
        return
    with _tls_serving(vendor, tls):
        yield vendor


@contextmanager
def _tls_serving(vendor: Vendor, tls: ssl.SSLContext) -> Iterator[None]:
    import asyncio
    import threading

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    runner = web.AppRunner(vendor.app())

    async def start() -> int:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls)
        await site.start()
        return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    vendor.port = asyncio.run_coroutine_threadsafe(start(), loop).result(60)
    try:
        yield
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(60)
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


@dataclass(frozen=True)
class CertAuthority:
    ca: Path
    cert: Path
    key: Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="session")
def test_ca(tmp_path_factory: pytest.TempPathFactory) -> CertAuthority:
    """A CA made for the test run, and a certificate it signed for 127.0.0.1."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed: no test CA can be made")
    where = tmp_path_factory.mktemp("ca")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    _openssl(
        "req",
        "-x509",
        *ec,
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=recon test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
        cwd=where,
    )
    _openssl(
        "req",
        *ec,
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
        cwd=where,
    )
    (where / "ext.cnf").write_text(
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\n"
        "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
        "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n"
    )
    _openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        cwd=where,
    )
    return CertAuthority(where / "ca.pem", where / "server.pem", where / "server.key")


@pytest.fixture
def server_tls(test_ca: CertAuthority) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(test_ca.cert, test_ca.key)
    return context
