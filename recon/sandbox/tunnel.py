"""What the first bytes a client sends through the egress proxy name (pure functions).

A tunnel opened with ``CONNECT api.example.com:443`` must speak to that host: the proxy
reads the client's first flight and refuses it when the TLS server name (SNI) of its
ClientHello, or the ``Host`` header of its plain HTTP request, names another host. Only
the opening is visible: what a TLS session carries afterwards is encrypted, so one
connection is checked once, at its start. A client that sends neither TLS nor HTTP is
refused. An absent name is no mismatch (TLS to a raw IP address carries no server name,
and an HTTP/1.0 request may have no ``Host``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

TLS_HANDSHAKE = 0x16
CLIENT_HELLO = 0x01
SERVER_NAME_EXT = 0x0000
_REQUEST_LINE = re.compile(rb"^[A-Z]{1,20} [\x21-\x7e]+ HTTP/1\.[01]\r\n")
_HEADER_LINE = re.compile(rb"^[!#$%&'*+.^_`|~0-9A-Za-z-]+:[\t\x20-\x7e\x80-\xff]*\Z")
"""``name: value``: the name a token, right before its colon; the value free of control bytes
(a bare CR or LF among them: a second header an upstream would read but this check would not)."""
_METHOD_PREFIX = re.compile(rb"^[A-Z]{0,20}( [^\s]*)?( H?T?T?P?/?1?\.?[01]?\r?)?$")


@dataclass(frozen=True)
class Opening:
    """``short``: more bytes are needed to tell; ``other``: neither TLS nor HTTP/1."""

    kind: Literal["tls", "http", "other", "short"]
    name: str | None = None  # the server name or the Host's host part, lower case
    port: int | None = None  # the Host header's port, when it names one
    why: str = ""  # for ``other``: what was wrong


def read_opening(data: bytes) -> Opening:
    """Classify a client's first bytes and read the host they name."""
    if not data:
        return Opening("short")
    if data[0] == TLS_HANDSHAKE:
        return _tls(data)
    return _http(data)


def mismatch(opening: Opening, host: str, port: int) -> str | None:
    """Why ``opening`` may not go to ``host:port``, or None when it may."""
    target = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if opening.kind == "other":
        return f"neither TLS nor HTTP ({opening.why}); refused"
    if opening.name is None:
        return None
    if opening.kind == "tls" and opening.name != host:
        return f"TLS server name {opening.name} differs from the proxy target {target}"
    if opening.kind == "http" and (opening.name != host or opening.port not in (None, port)):
        shown = opening.name if opening.port is None else f"{opening.name}:{opening.port}"
        return f"HTTP Host {shown} differs from the proxy target {target}"
    return None


def _norm(name: str) -> str:
    return name.strip().lower().strip("[]").rstrip(".")


# -- TLS ----------------------------------------------------------------------------------


def _tls(data: bytes) -> Opening:
    """The ClientHello's handshake message may span records; gather it, then read SNI."""
    message = b""
    offset = 0
    while True:
        if len(message) >= 4 and len(message) >= 4 + int.from_bytes(message[1:4], "big"):
            break
        if len(data) < offset + 5:
            return Opening("short")
        if data[offset] != TLS_HANDSHAKE:
            return Opening("other", why="a TLS record that is not a handshake")
        size = int.from_bytes(data[offset + 3 : offset + 5], "big")
        if len(data) < offset + 5 + size:
            return Opening("short")
        message += data[offset + 5 : offset + 5 + size]
        offset += 5 + size
    if message[0] != CLIENT_HELLO:
        return Opening("other", why="a TLS handshake that does not start with a ClientHello")
    body = message[4 : 4 + int.from_bytes(message[1:4], "big")]
    try:
        return Opening("tls", name=_server_name(body))
    except (IndexError, ValueError, UnicodeDecodeError):
        return Opening("other", why="a malformed TLS ClientHello")


def _server_name(hello: bytes) -> str | None:
    pos = 2 + 32  # legacy version, random
    pos += 1 + hello[pos]  # session id
    pos += 2 + int.from_bytes(hello[pos : pos + 2], "big")  # cipher suites
    pos += 1 + hello[pos]  # compression methods
    if pos >= len(hello):
        return None  # no extensions at all
    end = pos + 2 + int.from_bytes(hello[pos : pos + 2], "big")
    pos += 2
    while pos + 4 <= end:
        kind = int.from_bytes(hello[pos : pos + 2], "big")
        size = int.from_bytes(hello[pos + 2 : pos + 4], "big")
        if kind == SERVER_NAME_EXT:
            return _host_name(hello[pos + 4 : pos + 4 + size])
        pos += 4 + size
    return None


def _host_name(ext: bytes) -> str | None:
    end = 2 + int.from_bytes(ext[0:2], "big")
    pos = 2
    while pos + 3 <= end:
        kind, size = ext[pos], int.from_bytes(ext[pos + 1 : pos + 3], "big")
        if kind == 0:  # host_name
            raw = ext[pos + 3 : pos + 3 + size]
            if len(raw) != size:
                raise ValueError("truncated server name")
            return _norm(raw.decode("ascii"))
        pos += 3 + size
    return None


# -- HTTP ---------------------------------------------------------------------------------


def _http(data: bytes) -> Opening:
    head, sep, _ = data.partition(b"\r\n\r\n")
    if not _REQUEST_LINE.match(data):
        if b"\r\n" not in data and _METHOD_PREFIX.match(data):
            return Opening("short")
        return Opening("other", why="no HTTP/1 request line")
    if not sep:
        return Opening("short")
    problem = head_problem(head)
    if problem is not None:
        return Opening("other", why=problem)
    hosts = [
        line.split(b":", 1)[1].decode("latin-1").strip()
        for line in head.split(b"\r\n")[1:]
        if line.lower().startswith(b"host:")
    ]
    if len(hosts) > 1:
        return Opening("other", why="more than one Host header")
    if not hosts:
        return Opening("http")
    return _host_header(hosts[0])


def head_problem(head: bytes) -> str | None:
    """What makes an HTTP/1 request head (without its closing blank line) one that two
    parsers could read differently, or None: a request line with a control byte, space or
    non-ASCII byte in its target, a header line that is not ``token: value`` (whitespace
    before the colon, a folded line), or a control byte in a value (a bare CR or LF)."""
    line, *headers = head.split(b"\r\n")
    if not _REQUEST_LINE.match(line + b"\r\n"):
        return f"a malformed request line {oneline(line)}"
    for header in headers:
        if not _HEADER_LINE.match(header):
            return f"a malformed header line {oneline(header)}"
    return None


def oneline(data: bytes, limit: int = 80) -> str:
    """``data`` quoted for a log line: bounded, control bytes escaped."""
    return repr(data[:limit])[1:]


def _host_header(value: str) -> Opening:
    host, port_text = value, ""
    if value.startswith("["):
        inner, _, rest = value.partition("]")
        host, port_text = inner + "]", rest.removeprefix(":")
    elif value.count(":") == 1:
        host, _, port_text = value.partition(":")
    if port_text and not (port_text.isdigit() and 0 < int(port_text) < 65536):
        return Opening("other", why=f"a bad Host header {value[:100]!r}")
    return Opening("http", name=_norm(host), port=int(port_text) if port_text else None)
