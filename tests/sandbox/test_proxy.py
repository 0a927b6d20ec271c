"""The egress proxy and the in-container bridge, without docker: allow-list parsing, and a
real proxy on a unix socket in front of a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import http.server
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from recon.sandbox.proxy import (
    MAX_EVENTS,
    MAX_HEAD,
    EgressLog,
    EgressProxy,
    Rule,
    Verdict,
    _parse,
    admit,
    allowed,
    parse_allow,
    split_authority,
)
from recon.sandbox.rootfs import AGENT_UID as AGENT
from tests.conftest import free_port
from tests.sandbox.conftest import client_hello
from tests.sandbox.local_http import running, serve

SYSTEM_PYTHON = "/usr/bin/python3"  # one every uid may run (the venv's may sit under /root)
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
            path,
            f"GET http://127.0.0.1:{upstream}/plain HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode(),
        )
        tunnel = _ask(
            path,
            f"CONNECT 127.0.0.1:{upstream} HTTP/1.1\r\n\r\n".encode(),
            f"GET /tunnel HTTP/1.1\r\nHost: 127.0.0.1:{upstream}\r\n"
            "Connection: close\r\n\r\n".encode(),
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
    assert (log.allowed, log.refused, log.failed) == (2, 5, 0)  # junk is refused too
    verdicts = [(e["target"], e["verdict"]) for e in log.events]
    assert ("example.com:443", "refused") in verdicts
    assert ("10.1.2.3:80", "refused") in verdicts
    assert not path.exists()  # the socket is removed when the attempt ends


def test_unreachable_upstream_is_failed_not_refused(sock_dir: Path) -> None:
    closed_port = free_port()
    path = sock_dir / "egress.sock"
    with EgressProxy(path, [f"127.0.0.1:{closed_port}"]) as proxy:
        answer = _ask(path, f"CONNECT 127.0.0.1:{closed_port} HTTP/1.1\r\n\r\n".encode())
    assert answer.startswith(b"HTTP/1.1 502")
    assert (proxy.log.allowed, proxy.log.refused, proxy.log.failed) == (0, 0, 1)


def test_bridge_forwards_loopback_tcp_to_the_proxy(upstream: int, sock_dir: Path) -> None:
    """bridge.py as it runs in the container: 127.0.0.1:PORT → the proxy's unix socket."""
    path = sock_dir / "egress.sock"
    port = free_port()
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
                    s.sendall(f"GET http://{target} HTTP/1.1\r\n\r\n".encode())
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


# -- a tunnel must speak to the host it was opened for --------------------------------------


@pytest.fixture
def recording() -> Iterator[tuple[int, list[str]]]:
    """An upstream HTTP server that records the ``Host`` header of every request."""
    hosts: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hosts.append(str(self.headers.get("Host")))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    with running(Handler) as port:
        yield port, hosts


def test_a_host_header_that_differs_from_the_connect_target_is_refused_and_counted(
    recording: tuple[int, list[str]], sock_dir: Path
) -> None:
    port, hosts = recording
    path = sock_dir / "egress.sock"
    connect = f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode()
    with EgressProxy(path, [f"127.0.0.1:{port}"]) as proxy:
        evil = _ask(path, connect, b"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n")
        evil_port = _ask(
            path, connect, f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port + 1}\r\n\r\n".encode()
        )
        good = _ask(
            path,
            connect,
            f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode(),
        )
        plain = _ask(
            path, f"GET http://127.0.0.1:{port}/ HTTP/1.1\r\nHost: evil.example\r\n\r\n".encode()
        )
    assert hosts == [f"127.0.0.1:{port}"]  # the upstream never saw the other names
    assert good.endswith(b"ok")
    for answer in (evil, evil_port, plain):
        assert b"403" in answer and b"ok" not in answer.split(b"\r\n\r\n", 1)[-1], answer
    assert (proxy.log.allowed, proxy.log.refused) == (1, 3)
    reasons = [e["reason"] for e in proxy.log.events if e["verdict"] == "refused"]
    assert all("differs from the proxy target" in r for r in reasons), reasons
    assert "evil.example" in reasons[0]


def test_a_tls_server_name_that_differs_from_the_connect_target_is_refused(
    recording: tuple[int, list[str]], sock_dir: Path
) -> None:
    port, hosts = recording
    path = sock_dir / "egress.sock"
    allow = [f"localhost:{port}", f"127.0.0.1:{port}"]
    with EgressProxy(path, allow) as proxy:
        evil = _ask(
            path,
            f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode(),
            client_hello("evil.example"),
        )
        same = _ask(
            path, f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode(), client_hello("localhost")
        )
        by_ip = _ask(
            path, f"CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n".encode(), client_hello(None)
        )
        junk = _ask(
            path, f"CONNECT localhost:{port} HTTP/1.1\r\n\r\n".encode(), b"\x00\x01SSH-2.0\r\n"
        )
    assert evil == b"" and junk == b""  # the tunnel was closed before anything went upstream
    assert b"400" in same and b"400" in by_ip  # the HTTP upstream's answer to a ClientHello
    verdicts = [(e["target"], e["verdict"], e["reason"]) for e in proxy.log.events]
    assert (proxy.log.allowed, proxy.log.refused) == (2, 2), verdicts
    assert "TLS server name evil.example differs" in verdicts[0][2]
    assert "neither TLS nor HTTP" in verdicts[3][2]
    assert hosts == []


@pytest.mark.skipif(os.geteuid() != 0, reason="connecting as another uid needs root")
def test_the_socket_is_reachable_by_the_agent_uid_only(upstream: int, sock_dir: Path) -> None:
    path = sock_dir / "egress.sock"
    sock_dir.chmod(0o755)
    request = (
        f"GET http://127.0.0.1:{upstream}/as-agent HTTP/1.1\r\nHost: 127.0.0.1:{upstream}\r\n\r\n"
    )
    client = (
        "import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); "
        "s.sendall(sys.argv[2].encode()); s.shutdown(socket.SHUT_WR); "
        "sys.stdout.buffer.write(b''.join(iter(lambda: s.recv(65536), b'')))"  # to the end
    )
    with EgressProxy(path, [f"127.0.0.1:{upstream}"], uid=AGENT) as proxy:
        info = path.stat()
        assert (info.st_uid, stat.S_IMODE(info.st_mode)) == (AGENT, 0o600)
        as_root = _ask(path, request.encode())
        as_agent = subprocess.run(
            [SYSTEM_PYTHON, "-c", client, str(path), request], user=AGENT,
            capture_output=True, timeout=30, check=True,
        ).stdout  # fmt: skip
        as_other = subprocess.run(
            [SYSTEM_PYTHON, "-c", client, str(path), request], user=AGENT + 1,
            capture_output=True, timeout=30,
        )  # fmt: skip
    assert as_agent.endswith(b"hello /as-agent")
    assert as_root.startswith(b"HTTP/1.1 403") and b"uid 0" in as_root
    assert b"Permission denied" in as_other.stderr  # the file mode stops it before connecting
    assert (proxy.log.allowed, proxy.log.refused) == (1, 1)


def test_closing_the_proxy_removes_the_socket_and_cuts_live_tunnels(
    upstream: int, sock_dir: Path
) -> None:
    path = sock_dir / "egress.sock"
    with EgressProxy(path, [f"127.0.0.1:{upstream}"]) as proxy, socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(str(path))
        s.sendall(f"CONNECT 127.0.0.1:{upstream} HTTP/1.1\r\n\r\n".encode())
        assert b" 200 " in s.recv(4096)
        proxy.close()
        assert not path.exists()
        assert s.recv(4096) == b""  # the tunnel was cut, not left open
        proxy.close()  # twice is fine
    with socket.socket(socket.AF_UNIX) as late, pytest.raises(OSError):
        late.connect(str(path))


# -- authority tricks: the decision, then the same tricks through a real socket -------------

RULES = parse_allow(["allowed.host", "allowed.host:80", "127.0.0.1:8080", "[::1]:9000"])
LOOKALIKE = "\u0430llowed.host".encode("idna").decode()  # a Cyrillic а: xn--llowed-…


@pytest.mark.parametrize(
    ("target", "status"),
    [
        ("allowed.host@evil.example:443", 400),  # userinfo
        ("evil.example@allowed.host:443", 400),
        ("allowed.host:443@evil.example", 400),
        ("allowed.host..:443", 400),  # an empty label
        ("allowed%2ehost:443", 400),  # percent-encoding
        ("allowed.host%00:443", 400),
        ("allowed.h\u00f3st:443", 400),  # non-ASCII, as latin-1 decodes it off the wire
        ("\u00d0\u00b0llowed.host:443", 400),  # a Cyrillic а's UTF-8 bytes, read as latin-1
        ("allowed.host\\@evil.example:443", 400),
        ("allowed.host#@evil.example:443", 400),
        ("allowed.host:443:443", 400),
        ("allowed.host:\u0664\u0664\u0663", 400),  # Arabic-Indic digits: "443" to isdigit()
        ("[::1%lo]:9000", 400),  # a zone
        ("[::1]x:9000", 400),
        (f"{LOOKALIKE}:443", 403),  # punycode look-alike: another name
        ("evil.allowed.host:443", 403),
        ("allowed.host.evil.example:443", 403),
        ("2130706433:8080", 403),  # numeric forms of 127.0.0.1
        ("0177.0.0.1:8080", 403),
        ("0x7f.1:8080", 403),
        ("0x7f000001:8080", 403),
        ("127.1:8080", 403),
        ("127.000.000.001:8080", 403),
        ("[::ffff:127.0.0.1]:8080", 403),  # IPv6-mapped
        ("[::ffff:7f00:1]:8080", 403),
        ("[0:0:0:0:0:0:0:1]:9000", 403),  # another spelling of [::1]
        ("localhost:8080", 403),
        ("allowed.host:8443", 403),
    ],
)  # fmt: skip
def test_connect_to_another_spelling_of_a_listed_host_is_refused(target: str, status: int) -> None:
    verdict = admit("CONNECT", target, f"CONNECT {target} HTTP/1.1\r\n\r\n".encode(), RULES)
    assert (verdict.rule, verdict.status) == (None, status), verdict
    assert verdict.why and "\n" not in verdict.target


@pytest.mark.parametrize(
    ("target", "rule"),
    [
        ("allowed.host:443", Rule("allowed.host", 443)),
        ("allowed.host", Rule("allowed.host", 443)),
        ("ALLOWED.Host.:443", Rule("allowed.host", 443)),  # letter case, one trailing dot
        ("127.0.0.1:8080", Rule("127.0.0.1", 8080)),
        ("[::1]:9000", Rule("::1", 9000)),
    ],
)
def test_connect_to_a_listed_host_is_admitted(target: str, rule: Rule) -> None:
    assert admit("CONNECT", target, b"", RULES) == Verdict(str(rule), rule)


def http_head(target: str, *headers: str) -> bytes:
    return "\r\n".join([f"GET {target} HTTP/1.1", *headers, "", ""]).encode("latin-1")


@pytest.mark.parametrize(
    ("target", "headers", "status"),
    [
        ("http://allowed.host@evil.example/", ["Host: evil.example"], 400),
        ("http://evil.example@allowed.host/", ["Host: allowed.host"], 400),
        ("http://allowed.host:80@evil.example/", [], 400),
        ("http://allowed.host#@evil.example/", [], 400),
        ("http://allowed.host?@evil.example/", [], 400),
        ("http://allowed.host\\@evil.example/", [], 400),
        ("https://allowed.host/", [], 400),
        ("/relative", ["Host: allowed.host"], 400),
        ("http://allowed.host/", ["Host: allowed.host", "Host: evil.example"], 403),
        ("http://allowed.host/", ["Host: allowed.host", "host: allowed.host"], 403),
        ("http://allowed.host/", ["Host: evil.example"], 403),
        ("http://allowed.host/", ["Host: allowed.host:8080"], 403),
        ("http://allowed.host/", ["Host : evil.example"], 403),  # space before the colon
        ("http://allowed.host/", [" Host: evil.example"], 403),  # a folded line
        ("http://allowed.host/", ["X: y\nHost: evil.example"], 403),  # a bare LF
        ("http://allowed.host/", ["X: y\rHost: evil.example"], 403),  # a bare CR
        ("http://allowed.host/", ["Host: allowed.host\x00evil"], 403),
        ("http://2130706433:8080/", ["Host: 2130706433:8080"], 403),
        (f"http://{LOOKALIKE}/", [f"Host: {LOOKALIKE}"], 403),
    ],
)  # fmt: skip
def test_a_plain_request_naming_another_host_is_refused(
    target: str, headers: list[str], status: int
) -> None:
    verdict = admit("GET", target, http_head(target, *headers), RULES)
    assert (verdict.rule, verdict.status) == (None, status), verdict


def test_a_plain_request_to_a_listed_host_is_admitted_with_its_path() -> None:
    for host in ("allowed.host", "ALLOWED.HOST.", "allowed.host:80"):
        head = http_head("HTTP://allowed.host/v1?q=1", f"Host: {host}")
        verdict = admit("GET", "HTTP://allowed.host/v1?q=1", head, RULES)
        assert verdict == Verdict("allowed.host:80", Rule("allowed.host", 80), path="v1?q=1")


@pytest.mark.parametrize(
    "head",
    [
        b"GET http://allowed.host/x\nHost: evil.example HTTP/1.1\r\n\r\n",  # LF in the path
        b"GET http://allowed.host/x\rHost: evil.example HTTP/1.1\r\n\r\n",
        b"GET http://allowed.host/\x00 HTTP/1.1\r\n\r\n",
        b"GET http://allowed.host/\xc3\xa9 HTTP/1.1\r\n\r\n",
        b"GET http://allowed.host/ HTTP/1.1\r\nX: y\nHost: evil.example\r\n\r\n",
        b"GET http://allowed.host/ HTTP/1.1\r\nHost : evil.example\r\n\r\n",
        b"get http://allowed.host/ HTTP/1.1\r\n\r\n",
        b"GET http://allowed.host/ HTTP/2\r\n\r\n",
        b"hello\r\n\r\n",
    ],
)
def test_a_head_two_parsers_could_read_differently_is_refused(head: bytes) -> None:
    with pytest.raises(ValueError, match="malformed"):
        _parse(head)


def _counts(proxy: EgressProxy) -> tuple[int, int, int]:
    return proxy.log.allowed, proxy.log.refused, proxy.log.failed


def test_authority_tricks_through_the_socket_are_refused_and_counted(
    recording: tuple[int, list[str]], sock_dir: Path
) -> None:
    """Each trick, sent to a real proxy in front of a real upstream: none reaches it, each
    is answered 400 or 403 and counted once."""
    port, hosts = recording
    path = sock_dir / "egress.sock"
    good = f"127.0.0.1:{port}"
    tricks = [
        f"CONNECT {good}@evil.example:443 HTTP/1.1\r\n\r\n",
        f"CONNECT evil.example@{good} HTTP/1.1\r\n\r\n",
        f"CONNECT 2130706433:{port} HTTP/1.1\r\n\r\n",
        f"CONNECT 0177.0.0.1:{port} HTTP/1.1\r\n\r\n",
        f"CONNECT 0x7f.1:{port} HTTP/1.1\r\n\r\n",
        f"CONNECT [::ffff:127.0.0.1]:{port} HTTP/1.1\r\n\r\n",
        f"CONNECT {LOOKALIKE}:{port} HTTP/1.1\r\n\r\n",
        f"GET http://{good}@evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n",
        f"GET http://{good}/ HTTP/1.1\r\nHost: {good}\r\nHost: evil.example\r\n\r\n",
        f"GET http://{good}/x\nHost: evil.example HTTP/1.1\r\nHost: {good}\r\n\r\n",
        f"GET http://{good}/ HTTP/1.1\r\nHost: {good}\r\nX: y\nHost: evil.example\r\n\r\n",
        f"GET http://{good}/ HTTP/1.1\r\nHost : evil.example\r\n\r\n",
    ]
    connect = f"CONNECT {good} HTTP/1.1\r\n\r\n".encode()
    smuggled = [  # what a tunnel to the listed host carries first
        b"GET / HTTP/1.1\r\nX: y\nHost: evil.example\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost : evil.example\r\n\r\n",
        f"GET / HTTP/1.1\r\nHost: {good}\r\nHost: evil.example\r\n\r\n".encode(),
        b"GET / HTTP/1.1\nHost: evil.example\r\n\r\n",
    ]
    with EgressProxy(path, [good, f"localhost:{port}"]) as proxy:
        answers = [_ask(path, trick.encode()) for trick in tricks]
        tunnelled = [_ask(path, connect, first) for first in smuggled]
        honest = _ask(path, f"GET http://{good}/ HTTP/1.1\r\nHost: {good}\r\n\r\n".encode())
    assert hosts == [good]  # only the honest request reached the upstream
    assert honest.endswith(b"ok")
    for trick, answer in zip(tricks, answers, strict=True):
        assert answer.startswith((b"HTTP/1.1 400 ", b"HTTP/1.1 403 ")), (trick, answer)
    assert all(b"ok" not in answer.split(b"\r\n\r\n", 1)[-1] for answer in tunnelled)
    assert _counts(proxy) == (1, len(tricks) + len(smuggled), 0)


def test_an_oversized_head_is_refused_and_counted(sock_dir: Path) -> None:
    path = sock_dir / "egress.sock"
    with EgressProxy(path, []) as proxy, socket.socket(socket.AF_UNIX) as s:
        s.settimeout(60)
        s.connect(str(path))
        head = b"GET http://allowed.host/ HTTP/1.1\r\nX-Pad: " + b"a" * (MAX_HEAD + 1)
        with contextlib.suppress(OSError):  # the proxy may cut the rest of it off
            s.sendall(head)
        answer = _read_all(s)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]
    assert _counts(proxy) == (0, 1, 0)
    assert proxy.log.events[0]["reason"] == f"a request head over {MAX_HEAD} bytes"


def test_a_refused_client_still_sending_reads_its_answer_rather_than_a_reset(
    sock_dir: Path,
) -> None:
    """The proxy lingers after a refusal, reading and dropping what the client still sends:
    closing over unread input would reset the client, which could lose the answer."""
    path = sock_dir / "egress.sock"
    with EgressProxy(path, []) as proxy, socket.socket(socket.AF_UNIX) as s:
        s.settimeout(60)
        s.connect(str(path))
        s.sendall(b"GET http://allowed.host/ HTTP/1.1\r\nX-Pad: " + b"a" * (4 * MAX_HEAD))
        answer = _read_all(s)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]
    assert _counts(proxy) == (0, 1, 0)


def trickle(sock_path: Path, seen: list[bytes], stop: threading.Event) -> None:
    """A slowloris client: a head that never ends, one byte at a time, until cut off (or
    ``stop``); what it got back goes into ``seen``."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(60)
        s.connect(str(sock_path))
        s.setblocking(False)
        data = b"GET http://allowed.host/ HTTP/1.1\r\nX-Slow: " + b"a" * 100_000
        got = b""
        for byte in data:
            if stop.is_set():
                break
            with contextlib.suppress(BlockingIOError):
                chunk = s.recv(4096)
                got += chunk
                if not chunk:
                    break
            try:
                s.send(bytes([byte]))
            except OSError:
                break
            time.sleep(0.01)
        s.setblocking(True)
        with contextlib.suppress(OSError):
            got += _read_all(s) if not stop.is_set() else b""
        seen.append(got)


def test_slow_clients_do_not_hold_up_others(upstream: int, sock_dir: Path) -> None:
    """Three clients sending a head one byte at a time: an honest request is served while
    they are still connected (the proxy waits on no one); each is counted when it leaves."""
    path = sock_dir / "egress.sock"
    stop = threading.Event()
    seen: list[bytes] = []
    with EgressProxy(path, [f"127.0.0.1:{upstream}"]) as proxy:
        slow = [threading.Thread(target=trickle, args=(path, seen, stop)) for _ in range(3)]
        for thread in slow:
            thread.start()
        wait_until(lambda: len(proxy._writers) >= 3)
        good = f"127.0.0.1:{upstream}"
        honest = _ask(path, f"GET http://{good}/x HTTP/1.1\r\nHost: {good}\r\n\r\n".encode())
        assert all(thread.is_alive() for thread in slow)  # still trickling
        stop.set()
        for thread in slow:
            thread.join(60)
        wait_until(lambda: proxy.log.refused >= 3)
    assert honest.endswith(b"hello /x")
    assert seen == [b"", b"", b""]
    assert _counts(proxy) == (1, 3, 0)
    reasons = {str(e["reason"]) for e in proxy.log.events if e["verdict"] == "refused"}
    assert all(r.startswith("closed after ") for r in reasons), reasons


def test_a_slow_client_is_cut_off_after_the_head_timeout_and_counted(
    sock_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("recon.sandbox.proxy.HEAD_TIMEOUT_S", 1)
    path = sock_dir / "egress.sock"
    seen: list[bytes] = []
    with EgressProxy(path, []) as proxy:
        trickle(path, seen, threading.Event())  # returns once the proxy cuts it off
    assert seen[0].startswith(b"HTTP/1.1 408 "), seen
    assert _counts(proxy) == (0, 1, 0)
    assert proxy.log.events[0]["reason"] == "no complete request head within 1 s"


def wait_until(condition: Callable[[], bool]) -> None:
    """Poll ``condition`` (generously bounded: a failing test ends, a slow machine passes)."""
    for _ in range(6000):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError("the condition never held")
