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

What is admitted is decided before any connection, by :func:`admit` (pure). A head that
two parsers could read differently (a bare CR or LF, whitespace before a header's colon, a
folded line, control bytes in the target: ``tunnel.head_problem``) is refused, as is a head
over :data:`MAX_HEAD` bytes or one not complete within :data:`HEAD_TIMEOUT_S` (a client
sending a byte at a time holds no one else up: each connection is its own task). Every
refusal is answered and counted.
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
from recon.sandbox.tunnel import Opening, head_problem, mismatch, oneline, read_opening

MAX_HEAD = 64 * 1024
MAX_EVENTS = 1000
HEAD_TIMEOUT_S = 30
CONNECT_TIMEOUT_S = 15
# After a refusal the proxy reads and drops what the client still sends, for at most this
# long, before it closes: closing a socket with unread input resets the peer, which can
# then lose the reply it was sent (a lingering close, as HTTP servers do).
LINGER_S = 1.0


@dataclass(frozen=True)
class Verdict:
    """What the proxy does with one request head: connect to ``rule``, or answer ``status``
    and count a refusal of ``target`` for ``why``."""

    target: str  # as the log names it
    rule: Rule | None = None  # where to connect, when admitted
    status: int = 200
    why: str = ""
    path: str = ""  # a plain request's path, forwarded in origin form


def admit(method: str, target: str, head: bytes, rules: list[Rule]) -> Verdict:
    """The proxy's decision on a request head, before any connection is made.

    ``CONNECT host:port``, or an absolute ``http://`` URL whose ``Host`` names the same
    host and port. The authority must be a plain host name or address (no userinfo, no
    percent-encoding, no non-ASCII look-alike), and it is admitted only when it is exactly on
    the allow-list after lower-casing and dropping a trailing dot: another spelling of a
    listed address (``2130706433``, ``0x7f.1``, ``[::ffff:127.0.0.1]``) is another host.
    """
    shown = oneline(target.encode("latin-1", "backslashreplace"), 200)
    authority, path = target, ""
    if method != "CONNECT":
        if not target.lower().startswith("http://"):
            return Verdict(shown, None, 400, "not an absolute http:// URL, nor CONNECT")
        authority, _, path = target[len("http://") :].partition("/")
    try:
        host, port = split_authority(authority, 443 if method == "CONNECT" else 80)
    except ValueError as err:
        return Verdict(shown, None, 400, f"bad target: {err}")
    rule = Rule(host, port)
    if not allowed(host, port, rules):
        return Verdict(str(rule), None, 403, "not on the entry's allow-list")
    why = None if method == "CONNECT" else mismatch(read_opening(head), host, port)
    if why is not None:
        return Verdict(str(rule), None, 403, why)
    return Verdict(str(rule), rule, path=path)


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
        head = await self._head(reader, writer)
        if head is None:
            return
        try:
            method, target, rest = _parse(head)
        except ValueError as err:
            await self._refuse(reader, writer, Verdict("(no target)", None, 400, str(err)))
            return
        peer = _peer_uid(writer)
        if self.uid is not None and peer != self.uid:
            why = f"peer uid {peer} is not the agent's uid {self.uid}"
            shown = oneline(target.encode("latin-1", "backslashreplace"), 200)
            await self._refuse(reader, writer, Verdict(shown, None, 403, why))
            return
        verdict = admit(method, target, head, self.rules)
        if verdict.rule is None:
            await self._refuse(reader, writer, verdict)
        elif method == "CONNECT":
            await self._connect(verdict.rule, writer, reader)
        else:
            await self._forward(method, verdict, rest, writer, reader)

    async def _head(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bytes | None:
        """The request head, read within HEAD_TIMEOUT_S and MAX_HEAD bytes; a client that
        sends too much or too slowly is answered, cut off and counted as refused."""
        try:
            return await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HEAD_TIMEOUT_S)
        except asyncio.IncompleteReadError as err:
            if err.partial:  # a client that connects and sends nothing asked for nothing
                why = f"closed after {len(err.partial)} bytes, before the end of its head"
                self.log.record(oneline(err.partial, 200), "refused", why, self._started)
            return None
        except asyncio.LimitOverrunError:
            why = f"a request head over {MAX_HEAD} bytes"
            await self._refuse(reader, writer, Verdict("(no target)", None, 431, why))
        except TimeoutError:
            why = f"no complete request head within {HEAD_TIMEOUT_S} s"
            await self._refuse(reader, writer, Verdict("(no target)", None, 408, why))
        return None

    async def _refuse(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, verdict: Verdict
    ) -> None:
        self.log.record(verdict.target, "refused", verdict.why, self._started)
        await _reply(reader, writer, verdict.status, f"egress refused: {verdict.why}")

    async def _connect(
        self, rule: Rule, writer: asyncio.StreamWriter, reader: asyncio.StreamReader
    ) -> None:
        host, port = rule.host, rule.port
        upstream = await self._open(host, port, reader, writer)
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
                await _reply(reader, writer, 403, f"egress refused: {why}")
            writer.close()
            return
        self.log.record(str(Rule(host, port)), "allowed", "on the allow-list", self._started)
        up_writer.write(first)
        await _pipe_both(reader, writer, up_reader, up_writer)

    async def _forward(
        self,
        method: str,
        verdict: Verdict,
        rest: bytes,
        writer: asyncio.StreamWriter,
        reader: asyncio.StreamReader,
    ) -> None:
        assert verdict.rule is not None
        upstream = await self._open(verdict.rule.host, verdict.rule.port, reader, writer)
        if upstream is None:
            return
        self.log.record(verdict.target, "allowed", "on the allow-list", self._started)
        up_reader, up_writer = upstream
        up_writer.write(f"{method} /{verdict.path} HTTP/1.1\r\n".encode() + rest)
        await up_writer.drain()
        await _pipe_both(reader, writer, up_reader, up_writer)

    async def _open(
        self, host: str, port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        target = str(Rule(host, port))
        try:
            upstream = await asyncio.wait_for(
                asyncio.open_connection(host, port), CONNECT_TIMEOUT_S
            )
        except (OSError, TimeoutError) as err:
            self.log.record(target, "failed", f"upstream unreachable: {err}", self._started)
            await _reply(reader, writer, 502, f"upstream {target} unreachable")
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
    """Method, target and the header lines to forward; ValueError for a head that two
    parsers could read differently (``tunnel.head_problem``)."""
    problem = head_problem(head.removesuffix(b"\r\n\r\n"))
    if problem is not None:
        raise ValueError(problem)
    line, _, rest = head.partition(b"\r\n")
    method, target, _version = line.decode("latin-1").split(" ", 2)
    headers = [h for h in rest.split(b"\r\n") if h and not h.lower().startswith(b"proxy-")]
    kept = [h for h in headers if not h.lower().startswith(b"connection:")]
    return method.upper(), target, b"\r\n".join([*kept, b"Connection: close", b"", b""])


async def _reply(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, status: int, message: str
) -> None:
    """Answer and close, lingering: the reply is sent and the writing side shut, then what
    the client still sends is read and dropped (until it closes, or for LINGER_S), so that
    the close does not reset a client whose input the proxy never read."""
    body = (message + "\n").encode()
    writer.write(
        f"HTTP/1.1 {status} {message}\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n".encode()
        + body
    )
    with contextlib.suppress(OSError):  # a reset peer, or TimeoutError: enough lingering
        await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
        deadline = time.monotonic() + LINGER_S
        while (left := deadline - time.monotonic()) > 0:
            if not await asyncio.wait_for(reader.read(65536), left):
                break
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
