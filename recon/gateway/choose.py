"""Which upstream an entry's model provider gets, and the vendor host a live one reaches.

Pure: the entry's ``model.provider`` in, a :class:`Choice` out; an unknown provider is one
:class:`~recon.errors.ConfigError` naming the file and field (exit 2). ``none`` is an entry
with no model at all (a scripted agent): it gets no gateway.
"""

from __future__ import annotations

from dataclasses import dataclass

from recon.errors import ConfigError
from recon.gateway.upstream import UpstreamKind
from recon.model.gateway import OFFLINE_PROVIDERS, Provider
from recon.model.gateway import VENDORS as MODEL_VENDORS

VENDORS: dict[str, tuple[Provider, str, str]] = {
    name: (name, url, key) for name, (url, key) in MODEL_VENDORS.items()
}
"""Each vendor's API host and the variable its key is conventionally in."""
OFFLINE = OFFLINE_PROVIDERS


@dataclass(frozen=True)
class Choice:
    kind: UpstreamKind | None
    provider: Provider | None = None
    base_url: str | None = None
    credential: str | None = None


def choose(provider: str, source: str, replay: bool = False) -> Choice:
    """The upstream for ``provider`` (``source``: the entry file, for the message);
    ``replay`` re-runs a recorded attempt offline whatever its provider."""
    if provider not in (*VENDORS, *OFFLINE):
        known = ", ".join([*VENDORS, *OFFLINE])
        raise ConfigError(
            f"{source}: model.provider: unknown provider {provider!r}; use one of {known}"
        )
    if provider == "none":
        return Choice(None)
    if replay:
        return Choice("replay")
    if provider == "scripted":
        return Choice("scripted")
    return Choice("live", *VENDORS[provider])
