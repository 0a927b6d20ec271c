"""The harness-side live settings: where each vendor is, which extra CA is trusted; pure
apart from reading the CA file."""

from __future__ import annotations

import pytest

from recon.errors import ConfigError
from recon.gateway.live import tls_context
from recon.gateway.settings import BASE_URL_VARIABLES, LiveSettings
from tests.gateway.conftest import CertAuthority


def test_by_default_each_vendor_is_its_own_host() -> None:
    live = LiveSettings.from_env({"ANTHROPIC_BASE_URL": "https://elsewhere"})  # the agent's
    assert live == LiveSettings()
    assert live.base_url("anthropic") == "https://api.anthropic.com"
    assert live.base_url("gemini") == "https://generativelanguage.googleapis.com"
    assert BASE_URL_VARIABLES == {
        "anthropic": "RECON_ANTHROPIC_BASE_URL",
        "openai": "RECON_OPENAI_BASE_URL",
        "gemini": "RECON_GEMINI_BASE_URL",
    }


def test_a_moved_vendor_and_an_extra_ca(test_ca: CertAuthority) -> None:
    live = LiveSettings.from_env(
        {
            "RECON_OPENAI_BASE_URL": "https://proxy.example.com:8443/openai/",
            "RECON_GEMINI_BASE_URL": "",  # empty is unset
            "RECON_LIVE_CA": str(test_ca.ca),
        }
    )
    assert live.base_urls == {"openai": "https://proxy.example.com:8443/openai"}
    assert live.base_url("openai") == "https://proxy.example.com:8443/openai"
    assert live.base_url("anthropic") == "https://api.anthropic.com"
    assert live.ca == test_ca.ca
    trusted = [dict(c["subject"][0]) for c in tls_context(live.ca).get_ca_certs()]
    assert {"commonName": "recon test CA"} in trusted
    assert LiveSettings.from_env({"RECON_ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}).base_urls


@pytest.mark.parametrize(
    "value", ["ftp://x", "https://", "http://10.0.0.1", "https://h/?q=1", "https://h/#f", "h:1"]
)
def test_a_bad_base_url_is_one_line(value: str) -> None:
    with pytest.raises(ConfigError) as err:
        LiveSettings.from_env({"RECON_ANTHROPIC_BASE_URL": value})
    message = str(err.value)
    assert message.startswith(f"RECON_ANTHROPIC_BASE_URL={value!r}: ") and "\n" not in message
    assert err.value.exit_code == 2
