"""Reading the host a tunnel's first bytes name: real TLS ClientHellos, HTTP heads, junk."""

from __future__ import annotations

import pytest

from recon.sandbox.tunnel import Opening, mismatch, read_opening
from tests.sandbox.conftest import client_hello


@pytest.mark.parametrize("name", ["api.example.com", "localhost", "xn--bcher-kva.example"])
def test_the_server_name_of_a_real_client_hello(name: str) -> None:
    hello = client_hello(name)
    assert read_opening(hello) == Opening("tls", name=name)
    for cut in (1, 5, len(hello) // 2, len(hello) - 1):
        assert read_opening(hello[:cut]).kind == "short"


def test_a_client_hello_without_a_server_name() -> None:
    assert read_opening(client_hello(None)) == Opening("tls", name=None)


def test_a_client_hello_split_over_two_records() -> None:
    hello = client_hello("api.example.com")
    message = hello[5:]
    half = len(message) // 2
    records = b"".join(
        bytes([0x16, 0x03, 0x01]) + len(part).to_bytes(2, "big") + part
        for part in (message[:half], message[half:])
    )
    assert read_opening(records) == Opening("tls", name="api.example.com")


def test_broken_tls_is_other() -> None:
    hello = bytearray(client_hello("api.example.com"))
    hello[5] = 0x02  # a ServerHello from a client
    assert read_opening(bytes(hello)).kind == "other"
    assert read_opening(bytes([0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00])).kind == (
        "other"
    )  # a ClientHello with an empty body


@pytest.mark.parametrize(
    ("head", "name", "port"),
    [
        (b"GET / HTTP/1.1\r\nHost: API.Example.com.\r\n\r\n", "api.example.com", None),
        (b"POST /v1 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\n\r\n{}", "127.0.0.1", 8080),
        (b"GET / HTTP/1.1\r\nHost: [::1]:9000\r\n\r\n", "::1", 9000),
        (b"GET / HTTP/1.0\r\n\r\n", None, None),
    ],
)  # fmt: skip
def test_the_host_of_an_http_head(head: bytes, name: str | None, port: int | None) -> None:
    assert read_opening(head) == Opening("http", name=name, port=port)


@pytest.mark.parametrize("data", [b"G", b"GET", b"GET /v1 HT", b"GET / HTTP/1.1\r\nHost: a"])
def test_part_of_an_http_head_asks_for_more(data: bytes) -> None:
    assert read_opening(data).kind == "short"


@pytest.mark.parametrize(
    "data",
    [
        b"SSH-2.0-OpenSSH_9.6\r\n",
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
        b"\x00\x01\x02",
        b"GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: a.example:http\r\n\r\n",
        b"GET / HTTP/1.1\r\nX: y\nHost: b.example\r\n\r\n",  # a bare LF hides a Host
        b"GET / HTTP/1.1\r\nX: y\rHost: b.example\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost : b.example\r\n\r\n",  # whitespace before the colon
        b"GET / HTTP/1.1\r\nX: y\r\n Host: b.example\r\n\r\n",  # a folded line
        b"GET / HTTP/1.1\r\nHost: a.example\x00b.example\r\n\r\n",
        b"GET /\x7f HTTP/1.1\r\nHost: a.example\r\n\r\n",
    ],
)
def test_anything_else_is_other(data: bytes) -> None:
    assert read_opening(data).kind == "other"


def test_mismatch() -> None:
    assert mismatch(Opening("tls", "api.example.com"), "api.example.com", 443) is None
    assert mismatch(Opening("tls", None), "1.2.3.4", 443) is None
    why = mismatch(Opening("tls", "evil.example"), "api.example.com", 443)
    assert why == "TLS server name evil.example differs from the proxy target api.example.com:443"
    assert mismatch(Opening("http", "api.example.com"), "api.example.com", 80) is None
    assert mismatch(Opening("http", "api.example.com", 80), "api.example.com", 80) is None
    assert mismatch(Opening("http", "api.example.com", 81), "api.example.com", 80) is not None
    why = mismatch(Opening("http", "evil.example"), "::1", 80)
    assert why == "HTTP Host evil.example differs from the proxy target [::1]:80"
    assert "neither TLS nor HTTP" in str(mismatch(Opening("other", why="x"), "a", 1))
