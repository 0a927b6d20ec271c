"""The live upstream: the vendor's API over TLS, certificate verified, the real key added.

The key (:class:`recon.gateway.credential.Credential`, read from the host environment
when the gateway starts) is added to the upstream request's header only; the gateway
scrubs it from anything the upstream sends back, before a log, a recording or a reply.
Plain ``http`` is allowed to a loopback host only (tests and benches), so a key never
crosses a network in clear.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
from yarl import URL

from recon.errors import ConfigError
from recon.gateway.credential import Credential
from recon.gateway.protocols import credential_headers
from recon.gateway.upstream import Dropped, Outgoing, Refused, Reply, UpstreamKind

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def base_url(text: str) -> URL:
    """The upstream's base URL: https, or http to a loopback host."""
    url = URL(text)
    if url.scheme == "https" or (url.scheme == "http" and url.host in LOOPBACK):
        return url
    raise ConfigError(
        f"gateway: base URL {text!r} must be https:// (or http:// to 127.0.0.1 for tests)"
    )


def tls_context(extra_ca: Path | None) -> ssl.SSLContext:
    """Certificates verified against the system's roots, and ``extra_ca``'s when given
    (``RECON_LIVE_CA``, :mod:`recon.gateway.settings`)."""
    context = ssl.create_default_context()
    if extra_ca is not None:
        context.load_verify_locations(cafile=str(extra_ca))
    return context


class LiveUpstream:
    kind: UpstreamKind = "live"

    def __init__(self, url: str, credential: Credential, ca_bundle: Path | None = None) -> None:
        self.url = base_url(url)
        self.credential = credential
        self._tls = tls_context(ca_bundle)
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        """One session per gateway, made in its loop: connections are kept alive."""
        if self._session is None:
            timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=600)
            connector = aiohttp.TCPConnector(ssl=self._tls, limit=32)
            self._session = aiohttp.ClientSession(
                connector=connector, timeout=timeout, auto_decompress=True
            )
        return self._session

    async def send(self, out: Outgoing) -> Reply:
        headers = {
            **out.headers,
            "content-type": "application/json",
            **credential_headers(out.call.provider, self.credential.value),
        }
        url = self.url.with_path(self.url.path.rstrip("/") + out.path)
        try:
            response = await self._client().post(
                url, params=out.query, data=out.data(), headers=headers
            )
        except aiohttp.ClientConnectorCertificateError as err:
            raise Refused(f"the model API's TLS certificate is not trusted: {err}") from None
        except (aiohttp.ClientError, TimeoutError, OSError) as err:
            raise Dropped(f"{type(err).__name__}: {err}") from None
        return Reply(
            response.status,
            {k.lower(): v for k, v in response.headers.items()},
            _body(response),
            response.release,
        )

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


async def _body(response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    try:
        async for chunk in response.content.iter_any():
            yield chunk
    except (aiohttp.ClientError, TimeoutError, OSError) as err:
        raise Dropped(f"the model API dropped the response: {type(err).__name__}") from None
