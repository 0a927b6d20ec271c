"""The entry's real key: read from the host environment by its variable name when the
gateway starts, held in memory by the live upstream only, never shown."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from recon.errors import HarnessError


@dataclass(frozen=True)
class Credential:
    """A key and the name of the variable it came from; ``repr`` never shows the key."""

    variable: str
    value: str = field(repr=False)

    @classmethod
    def from_env(cls, variable: str, environ: Mapping[str, str]) -> Credential:
        value = environ.get(variable, "")
        if not value:
            raise HarnessError(
                f"credentials missing: {variable} is not set on the host that runs the attempt; "
                "export it there (its value never enters the sandbox)"
            )
        return cls(variable, value)


def scrub(text: str, credential: Credential | None) -> str:
    """``text`` with every occurrence of the key replaced by ``[credential]``."""
    if credential is None or not credential.value:
        return text
    return text.replace(credential.value, "[credential]")
