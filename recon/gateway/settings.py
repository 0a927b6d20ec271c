"""Where the live upstream reaches each vendor, and which extra CA it trusts: harness-side
settings, read from the host environment once (never from an entry file, never in the
sandbox).

- ``RECON_ANTHROPIC_BASE_URL``, ``RECON_OPENAI_BASE_URL``, ``RECON_GEMINI_BASE_URL``: the
  origin (and any path prefix) the vendor's API paths (``/v1/messages``, ...) are appended
  to, instead of the vendor's own host. ``https://``, or ``http://`` to 127.0.0.1 only. A
  maintainer points a vendor at a company proxy, or a test at a local TLS server.
- ``RECON_LIVE_CA``: a PEM file of CA certificates the live upstream trusts beside the
  system's roots. Certificates are always verified.

Pure apart from reading the CA file: a bad value is one :class:`~recon.errors.ConfigError`
naming the variable and the fix (exit 2), before any cell runs.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from recon.errors import ConfigError
from recon.model.gateway import VENDORS, Provider

BASE_URL_VARIABLES: dict[Provider, str] = {p: f"RECON_{p.upper()}_BASE_URL" for p in VENDORS}
CA_VARIABLE = "RECON_LIVE_CA"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


@dataclass(frozen=True)
class LiveSettings:
    """``base_urls``: the vendors whose base URL was moved, and where to; ``ca``: the extra
    CA file, or None."""

    base_urls: Mapping[str, str] = field(default_factory=dict)
    ca: Path | None = None

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> LiveSettings:
        moved: dict[str, str] = {
            provider: check_base_url(variable, environ[variable])
            for provider, variable in BASE_URL_VARIABLES.items()
            if environ.get(variable)
        }
        ca = environ.get(CA_VARIABLE)
        return cls(moved, check_ca(Path(ca)) if ca else None)

    def base_url(self, provider: Provider) -> str:
        """Where ``provider``'s live upstream posts: the moved URL, else the vendor's own."""
        return self.base_urls.get(provider) or VENDORS[provider][0]


def check_base_url(variable: str, value: str) -> str:
    """``value`` without a trailing ``/``, when it is a base URL the live upstream may use."""
    parts = urlsplit(value)
    problem = None
    if parts.scheme not in ("https", "http") or not parts.hostname:
        problem = "not an https:// URL"
    elif parts.scheme == "http" and parts.hostname not in LOOPBACK:
        problem = "plain http reaches 127.0.0.1 only (a key never crosses a network in clear)"
    elif parts.username or parts.password or parts.query or parts.fragment:
        problem = "a base URL holds no user, query or fragment"
    if problem:
        raise ConfigError(
            f"{variable}={value[:200]!r}: {problem}; set it to https://host[:port][/prefix] "
            "or unset it"
        )
    return value.rstrip("/")


def check_ca(path: Path) -> Path:
    """``path``, when it holds CA certificates in PEM form."""
    try:
        ssl.create_default_context().load_verify_locations(cafile=str(path))
    except (OSError, ssl.SSLError, ValueError) as err:
        why = (
            err.strerror
            if isinstance(err, OSError) and not isinstance(err, ssl.SSLError) and err.strerror
            else "holds no PEM certificate"
        )
        raise ConfigError(
            f"{CA_VARIABLE}={str(path)[:200]}: {why}; point it at a PEM file of CA "
            "certificates or unset it"
        ) from None
    return path
