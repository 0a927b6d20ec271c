"""The egress allow-list grammar of an entry's sandbox: ``host`` (port 443) or ``host:port``.

It lives in the model so that validating an entry never imports the sandbox; the egress
proxy (recon.sandbox.proxy) enforces the same rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*\Z")
"""A host name (ASCII labels: an IDN is written in its ``xn--`` form) or an IPv4 address."""
_V6 = re.compile(r"[0-9a-f]*:[0-9a-f:.]*\Z")
"""An IPv6 address, as written between brackets."""


@dataclass(frozen=True)
class Rule:
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def split_authority(text: str, default_port: int) -> tuple[str, int]:
    """``host``, ``host:port``, ``[v6]`` or ``[v6]:port`` → (lower-case host, port).

    The host is ASCII letters, digits, ``-`` and ``_`` in dot-separated labels (one trailing
    dot dropped), or hex digits and colons in brackets: userinfo (``a@b``), percent-encoding,
    a zone (``%eth0``), non-ASCII look-alikes and empty labels are refused."""
    text = text.strip()
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r}: bad bracketed IPv6 address")
        has_port, port_text = bool(rest), rest[1:]
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
        has_port = True
    elif ":" in text:
        raise ValueError(f"{text!r}: write an IPv6 address in brackets, e.g. [::1]:443")
    else:
        host, port_text, has_port = text, "", False
    host = host.lower().removesuffix(".") if host.isascii() else host
    if not (_V6 if text.startswith("[") else _NAME).match(host):
        raise ValueError(f"{text!r}: expected a host name or address, optionally with :port")
    if not has_port:
        return host, default_port
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        raise ValueError(f"{text!r}: port must be a number from 1 to 65535")
    return host, int(port_text)


def parse_allow(entries: list[str]) -> list[Rule]:
    """The entry's allow-list as rules; a bad entry raises ValueError naming it."""
    return [Rule(*split_authority(entry, 443)) for entry in entries]


def allowed(host: str, port: int, rules: list[Rule]) -> bool:
    host = host.lower().strip("[]").rstrip(".")
    return any(rule.host == host and rule.port == port for rule in rules)
