"""The egress proxy and the in-container bridge, without docker: allow-list parsing, and a
real proxy on a unix socket in front of a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from recon.sandbox.proxy import (
    MAX_EVENTS,
    EgressLog,
    EgressProxy,
    Rule,
    allowed,
    parse_allow,
    split_authority,
)
from tests.sandbox.local_http import serve

BRIDGE = Path(__file__).resolve().parents[2] / "recon" / "sandbox" / "bridge.py"


@pytest.mark.parametrize(
    ("text", "default", "expected"),
    [
        ("api.openai.com", 443, ("api.openai.com", 443)),
        ("API.Example.com.", 443, ("api.example.com", 443)),
        ("example.com:8443", 443, ("example.com", 8443)),
        ("127.0.0.1:8080", 443, ("127.0.0.1", 8080)),
        ("127.0.0.1", 80, ("127.0.0.1", 80)),
        ("[::1]", 443, ("::1", 443)),
        ("[::1]:8080", 443, ("::1", 8080)),
    ],
)
def test_split_authority(text: str, default: int, expected: tuple[str, int]) -> None:
    assert split_authority(text, default) == expected


@pytest.mark.parametrize(
    "text",
    ["", ":443", "host:", "host:http", "host:0", "host:70000", "::1", "[::1", "[::1]x",
     "https://example.com", "*.example.com", "user@example.com", "a b"],
)  # fmt: skip
def test_split_authority_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        split_authority(text, 443)


def test_allow_list_matching_is_exact() -> None:
    rules = parse_allow(["api.example.com", "127.0.0.1:8080", "[::1]:9000"])
    assert [str(r) for r in rules] == ["api.example.com:443", "127.0.0.1:8080", "[::1]:9000"]
    assert allowed("api.example.com", 443, rules)
    assert allowed("API.example.com.", 443, rules)
    assert not allowed("api.example.com", 80, rules)  # a bare host admits port 443 only
    assert not allowed("evil.api.example.com", 443, rules)
    assert not allowed("example.com", 443, rules)
    assert allowed("127.0.0.1", 8080, rules)
    assert not allowed("127.0.0.1", 8081, rules)
    assert not allowed("1.1.1.1", 443, rules)  # raw IPs only when listed themselves
    assert allowed("[::1]", 9000, rules)
    assert not allowed("api.example.com", 443, [])


def test_events_are_capped_but_counted() -> None:
    log = EgressLog()
    for _ in range(MAX_EVENTS + 5):
        log.record("x:443", "refused", "test", time.monotonic())
    assert log.refused == MAX_EVENTS + 5
    assert len(log.events) == MAX_EVENTS
    assert log.dropped_events == 5


@pytest.fixture
def upstream() -> Iterator[int]:
    """A real HTTP server on 127.0.0.1 standing in for a model API."""
    with serve(lambda path: f"hello {path}".encode()) as port:
        yield port


@pytest.fixture
def sock_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="recon-px-", dir="/tmp") as d:  # short for AF_UNIX
        yield Path(d)


def _ask(sock_path: Path, request: bytes, tunnel: bytes | None = None) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(str(sock_path))
        s.sendall(request)
        if tunnel is not None:
            head = s.recv(4096)
            if b" 200 " not in head:
                return head
            s.sendall(tunnel)
        return _read_all(s)


def _read_all(s: socket.socket) -> bytes:
    data = b""
    while chunk := s.recv(65536):
        data += chunk
    return data


def test_proxy_admits_the_allow_list_and_counts_the_rest(upstream: int, sock_dir: Path) -> None:
    path = sock_dir / "egress.sock"
    with EgressProxy(path, [f"127.0.0.1:{upstream}"]) as proxy:
        plain = _ask(
            path, f"GET http://127.0.0.1:{upstream}/plain HTTP/1.1\r\nHost: x\r\n\r\n".encode()
        )
        tunnel = _ask(
            path,
            f"CONNECT 127.0.0.1:{upstream} HTTP/1.1\r\n\r\n".encode(),
            b"GET /tunnel HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        other_port = _ask(path, f"CONNECT 127.0.0.1:{upstream + 1} HTTP/1.1\r\n\r\n".encode())
        name = _ask(path, b"CONNECT example.com:443 HTTP/1.1\r\n\r\n")
        raw_ip = _ask(path, b"GET http://10.1.2.3/ HTTP/1.1\r\nHost: 10.1.2.3\r\n\r\n")
        bad = _ask(path, b"CONNECT example.com:https HTTP/1.1\r\n\r\n")
        junk = _ask(path, b"hello\r\n\r\n")
    assert plain.startswith(b"HTTP/1.0 200") and plain.endswith(b"hello /plain")
    assert tunnel.startswith(b"HTTP/1.0 200") and tunnel.endswith(b"hello /tunnel")
    for answer in (other_port, name, raw_ip):
        assert answer.startswith(b"HTTP/1.1 403"), answer
    assert bad.startswith(b"HTTP/1.1 400") and junk.startswith(b"HTTP/1.1 400")
    log = proxy.log
    assert (log.allowed, log.refused, log.failed) == (2, 4, 0)
    verdicts = [(e["target"], e["verdict"]) for e in log.events]
    assert ("example.com:443", "refused") in verdicts
    assert ("10.1.2.3:80", "refused") in verdicts
    assert not path.exists()  # the socket is removed when the attempt ends


def test_unreachable_upstream_is_failed_not_refused(sock_dir: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed_port = s.getsockname()[1]
    path = sock_dir / "egress.sock"
    with EgressProxy(path, [f"127.0.0.1:{closed_port}"]) as proxy:
        answer = _ask(path, f"CONNECT 127.0.0.1:{closed_port} HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 502")
    assert (proxy.log.allowed, proxy.log.refused, proxy.log.failed) == (0, 0, 1)


def test_bridge_forwards_loopback_tcp_to_the_proxy(upstream: int, sock_dir: Path) -> None:
    """bridge.py as it runs in the container: 127.0.0.1:PORT → the proxy's unix socket."""
    path = sock_dir / "egress.sock"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with EgressProxy(path, [f"127.0.0.1:{upstream}"]) as proxy:
        bridge = subprocess.Popen(
            [sys.executable, str(BRIDGE), str(path), str(port)], stdout=subprocess.PIPE
        )
        try:
            assert bridge.stdout is not None
            assert bridge.stdout.readline().strip() == b"ready"
            answers = []
            for target in (f"127.0.0.1:{upstream}/via-bridge", "example.com/"):
                with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                    s.sendall(f"GET http://{target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                    s.shutdown(socket.SHUT_WR)  # half-close: the answer must still arrive
                    answers.append(_read_all(s))
        finally:
            bridge.kill()
            bridge.wait()
    assert answers[0].endswith(b"hello /via-bridge")
    assert answers[1].startswith(b"HTTP/1.1 403")
    assert (proxy.log.allowed, proxy.log.refused) == (1, 1)


def test_rule_str_round_trips() -> None:
    for rule in (Rule("example.com", 443), Rule("::1", 8080)):
        assert parse_allow([str(rule)]) == [rule]
