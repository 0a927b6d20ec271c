"""The placeholder registry of an entry's command templates (``agent.command``/``install``).

The registry lives here, in the model, so that a template is checked when the entry is
loaded (an unknown ``{name}`` is an error there, not a ``KeyError`` in an attempt) and so
that ``recon.agents``, which fills the templates, reads the same names.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from types import MappingProxyType

PLACEHOLDERS: Mapping[str, str] = MappingProxyType(
    {
        "workspace": "the Candidate workspace folder (the agent's working copy)",
        "brief": "the brief, brief.md in the workspace",
        "evidence": "the evidence folder in the workspace",
        "entry_dir": "the folder holding the entry's agent.files",
        "python": "a Python interpreter",
        "trace": "a file for the agent's trajectory (docker backend only)",
        "notice": (
            "the harness's notice to the agent: where to write (site/), its time budget and "
            "that the network is off, one shell-safe sentence (docker backend only)"
        ),
    }
)
DOCKER_ONLY = frozenset({"trace", "notice"})
"""Placeholders only the docker backend fills."""


def placeholders_in(template: str) -> list[str]:
    """The placeholder names ``template`` uses, in order (``{{``/``}}`` are literal braces)."""
    return [name for name, _, _ in _specs(template)]


def check_template(template: str) -> str:
    """``template`` when each placeholder is a bare known name, else ValueError."""
    if "\0" in template:
        raise ValueError("a command argument holds a NUL byte; remove it")
    known = ", ".join(f"{{{name}}}" for name in PLACEHOLDERS)
    for spec in _specs(template):
        name, conversion, format_spec = spec
        if name not in PLACEHOLDERS or conversion or format_spec:
            shown = "{" + name + (f"!{conversion}" if conversion else "")
            shown += (f":{format_spec}" if format_spec else "") + "}"
            raise ValueError(
                f"unknown placeholder {shown[:60]!r}; known: {known} "
                "(write a literal brace as {{ or }})"
            )
    return template


def _specs(template: str) -> list[tuple[str, str, str]]:
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as err:
        raise ValueError(
            f"malformed template ({err}); write a literal brace as {{{{ or }}}}"
        ) from None
    return [(f, conv or "", spec or "") for _, f, spec, conv in parsed if f is not None]
