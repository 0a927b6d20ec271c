"""The egress proxy: an HTTP proxy on a unix socket that admits only allow-listed hosts.

The container runs with ``--network none``. Its only way out is this socket, bind-mounted
into it and reached through a loopback bridge inside the container (``bridge.py``). Both
``CONNECT host:port`` (HTTPS) and absolute-form plain HTTP requests are handled; every
allowed and refused connection is counted and logged as policy evidence.

Allow-list entries are ``host`` (port 443), ``host:port``, ``[v6]`` or ``[v6]:port``.
Matching is exact on the lower-cased name or address: a name does not admit the addresses
it resolves to, and a raw IP is admitted only when it is itself on the list.

A connection must speak to the host it names: a tunnel whose TLS server name or HTTP
``Host`` differs from its ``CONNECT`` target (or a plain request whose ``Host`` differs from
its URL) is refused and counted (``tunnel.py``). With ``uid``, the socket belongs to that
uid alone (mode 0600) and the proxy refuses any peer of another uid (``SO_PEERCRED``).
``close()`` removes the socket and cuts every live connection: the contract's build step
runs after it, offline.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from recon.errors import HarnessError
from recon.model.egress import Rule, allowed, parse_allow, split_authority
from recon.sandbox.tunnel import Opening, mismatch, read_opening

MAX_HEAD = 64 * 1024
MAX_EVENTS = 1000
HEAD_TIMEOUT_S = 30
CONNECT_TIMEOUT_S = 15


@dataclass
class EgressLog:
    """What the proxy saw. ``failed``: admitted by policy, but the upstream did not answer."""

    allowed: int = 0
    refused: int = 0
    failed: int = 0
    events: list[dict[str, str | float]] = field(default_factory=list)
    dropped_events: int = 0

    def record(self, target: str, verdict: str, why: str, started: float) -> None:
        setattr(self, verdict, getattr(self, verdict) + 1)
        if len(self.events) >= MAX_EVENTS:
            self.dropped_events += 1
            return
        t = round(time.monotonic() - started, 3)
        self.events.append({"target": target, "verdict": verdict, "reason": why, "t": t})


class EgressProxy:
    """Serve the proxy on ``socket_path`` in a background thread while the attempt runs."""

    def __init__(self, socket_path: Path, allow: list[str], uid: int | None = None) -> None:
        self.socket_path = socket_path
        self.rules = parse_allow(allow)
        self.uid = uid
        self.log = EgressLog()
        self._started = time.monotonic()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._serve, name="recon-egress", daemon=True)
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()  # every live connection's, to cut

    def __enter__(self) -> EgressProxy:
        self._thread.start()
        if not self._ready.wait(10) or self._error is not None:
            self.close()
            raise HarnessError(f"egress proxy did not start on {self.socket_path}: {self._error}")
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving: the socket is removed and live connections are cut. Idempotent."""
        if self._thread.is_alive() and self._loop.is_running():
            asyncio.run_coroutine_threadsafe(self._shutdown(), self._loop)
        if self._thread.ident is not None:
            self._thread.join(timeout=10)
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._server = self._loop.run_until_complete(
                asyncio.start_unix_server(self._handle, path=str(self.socket_path), limit=MAX_HEAD)
            )
            if self.uid is None:
                self.socket_path.chmod(0o666)
            else:
                os.chown(self.socket_path, self.uid, self.uid)
                self.socket_path.chmod(0o600)
        except OSError as err:
            self._error = err
            self._ready.set()
            return
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for writer in list(self._writers):
            writer.close()
        self._loop.stop()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            await self._serve_one(reader, writer)
        finally:
            writer.close()
            self._writers.discard(writer)

    async def _serve_one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
            method, target, rest = _parse(head)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError):
            return
        except ValueError:
            await _reply(writer, 400, "bad request")
            return
        peer = _peer_uid(writer)
        if self.uid is not None and peer != self.uid:
            why = f"peer uid {peer} is not the agent's uid {self.uid}"
            self.log.record(target[:200], "refused", why, self._started)
            await _reply(writer, 403, f"egress is for the agent only; {why}")
            return
        try:
            if method == "CONNECT":
                await self._connect(target, writer, reader)
            else:
                await self._forward(method, target, head, rest, writer, reader)
        except ValueError as err:
            self.log.record(target[:200], "refused", f"bad target: {err}", self._started)
            await _reply(writer, 400, "bad proxy target")

    async def _connect(
        self, target: str, writer: asyncio.StreamWriter, reader: asyncio.StreamReader
    ) -> None:
        host, port = split_authority(target, 443)
        upstream = await self._open(host, port, writer)
        if upstream is None:
            return
        up_reader, up_writer = upstream
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        first, opening = await _opening(reader)
        why = mismatch(opening, host, port)
        if why is not None:
            self.log.record(str(Rule(host, port)), "refused", why, self._started)
            up_writer.close()
            if opening.kind == "http":
                await _reply(writer, 403, f"egress refused: {why}")
            writer.close()
            return
        self.log.record(str(Rule(host, port)), "allowed", "on the allow-list", self._started)
        up_writer.write(first)
        await _pipe_both(reader, writer, up_reader, up_writer)

    async def _forward(
        self,
        method: str,
        target: str,
        head: bytes,
        rest: bytes,
        writer: asyncio.StreamWriter,
        reader: asyncio.StreamReader,
    ) -> None:
        if not target.lower().startswith("http://"):
            await _reply(writer, 400, "proxy requests need an absolute http:// URL or CONNECT")
            return
        authority, _, path = target[len("http://") :].partition("/")
        host, port = split_authority(authority, 80)
        why = mismatch(read_opening(head), host, port)
        if why is not None and allowed(host, port, self.rules):
            self.log.record(str(Rule(host, port)), "refused", why, self._started)
            await _reply(writer, 403, f"egress refused: {why}")
            return
        upstream = await self._open(host, port, writer)
        if upstream is None:
            return
        self.log.record(str(Rule(host, port)), "allowed", "on the allow-list", self._started)
        up_reader, up_writer = upstream
        up_writer.write(f"{method} /{path} HTTP/1.1\r\n".encode() + rest)
        await up_writer.drain()
        await _pipe_both(reader, writer, up_reader, up_writer)

    async def _open(
        self, host: str, port: int, writer: asyncio.StreamWriter
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        target = str(Rule(host, port))
        if not allowed(host, port, self.rules):
            self.log.record(target, "refused", "not on the entry's allow-list", self._started)
            await _reply(writer, 403, f"egress to {target} is not allowed")
            return None
        try:
            upstream = await asyncio.wait_for(
                asyncio.open_connection(host, port), CONNECT_TIMEOUT_S
            )
        except (OSError, TimeoutError) as err:
            self.log.record(target, "failed", f"upstream unreachable: {err}", self._started)
            await _reply(writer, 502, f"upstream {target} unreachable")
            return None
        self._writers.add(upstream[1])
        return upstream


async def _opening(reader: asyncio.StreamReader) -> tuple[bytes, Opening]:
    """Read a tunnel's first bytes until they tell what they name (bounded in size and
    time); a client that closes first sent nothing, which names nothing."""
    data = b""
    deadline = time.monotonic() + HEAD_TIMEOUT_S
    while (opening := read_opening(data)).kind == "short":
        if len(data) > MAX_HEAD:
            return data, Opening("other", why=f"no complete opening in {MAX_HEAD} bytes")
        try:
            chunk = await asyncio.wait_for(reader.read(65536), deadline - time.monotonic())
        except TimeoutError:
            return data, Opening("other", why=f"nothing recognisable in {HEAD_TIMEOUT_S}s")
        if not chunk:
            return data, Opening("http") if not data else Opening("other", why="cut short")
        data += chunk
    return data, opening


def _peer_uid(writer: asyncio.StreamWriter) -> int:
    sock = writer.get_extra_info("socket")
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def _parse(head: bytes) -> tuple[str, str, bytes]:
    line, _, rest = head.partition(b"\r\n")
    method, target, _version = line.decode("latin-1").split(" ", 2)
    headers = [h for h in rest.split(b"\r\n") if h and not h.lower().startswith(b"proxy-")]
    kept = [h for h in headers if not h.lower().startswith(b"connection:")]
    return method.upper(), target, b"\r\n".join([*kept, b"Connection: close", b"", b""])


async def _reply(writer: asyncio.StreamWriter, status: int, message: str) -> None:
    body = (message + "\n").encode()
    writer.write(
        f"HTTP/1.1 {status} {message}\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    writer.close()


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while chunk := await src.read(65536):
            dst.write(chunk)
            await dst.drain()
        if dst.can_write_eof():
            dst.write_eof()
    except (ConnectionError, asyncio.IncompleteReadError, OSError):
        dst.close()


async def _pipe_both(
    r1: asyncio.StreamReader,
    w1: asyncio.StreamWriter,
    r2: asyncio.StreamReader,
    w2: asyncio.StreamWriter,
) -> None:
    try:
        await asyncio.gather(_pipe(r1, w2), _pipe(r2, w1))
    finally:
        for writer in (w1, w2):
            writer.close()
