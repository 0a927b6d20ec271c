"""An entry's model provider picks its upstream; an unknown one is one line, exit 2."""

from __future__ import annotations

import pytest

from recon.errors import EXIT_BAD_INPUT, ConfigError
from recon.gateway.choose import Choice, choose


def test_each_provider_gets_its_upstream() -> None:
    assert choose("anthropic", "e.yaml") == Choice(
        "live", "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"
    )
    assert choose("openai", "e.yaml").credential == "OPENAI_API_KEY"
    assert choose("gemini", "e.yaml").base_url == "https://generativelanguage.googleapis.com"
    assert choose("scripted", "e.yaml") == Choice("scripted")
    assert choose("anthropic", "e.yaml", replay=True) == Choice("replay")
    assert choose("none", "e.yaml", replay=True) == Choice(None)


def test_an_unknown_provider_is_one_line_naming_the_field() -> None:
    with pytest.raises(ConfigError) as err:
        choose("antropic", "entries/x.yaml")
    assert str(err.value) == (
        "entries/x.yaml: model.provider: unknown provider 'antropic'; "
        "use one of anthropic, openai, gemini, scripted, none"
    )
    assert err.value.exit_code == EXIT_BAD_INPUT
