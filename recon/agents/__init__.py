"""recon.agents: agent adapters. One generic command-template adapter drives every entry
(scripted agents, mini-swe-agent, Claude Code, Codex CLI); trace parsers read their counts;
the scripted model server stands in for a model API, started on demand for the entries
whose model provider is ``scripted``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.agents.adapter import CREDENTIALS_MISSING as CREDENTIALS_MISSING
    from recon.agents.adapter import CommandAdapter as CommandAdapter
    from recon.agents.adapter import Prepared as Prepared
    from recon.agents.adapter import not_started as not_started
    from recon.agents.model_server import CaseScripts as CaseScripts
    from recon.agents.model_server import FixedScript as FixedScript
    from recon.agents.model_server import ModelServer as ModelServer
    from recon.agents.model_server import Script as Script
    from recon.agents.model_server import serve_model as serve_model
    from recon.agents.scripted import ModelServers as ModelServers
    from recon.agents.scripted import scripted_port as scripted_port
    from recon.agents.trace import TRACE_PARSERS as TRACE_PARSERS
    from recon.agents.trace import TraceParser as TraceParser
    from recon.agents.trace import lines as lines
    from recon.agents.trace import mini_swe_agent as mini_swe_agent

_EXPORTS = {
    "CREDENTIALS_MISSING": "recon.agents.adapter",
    "CommandAdapter": "recon.agents.adapter",
    "Prepared": "recon.agents.adapter",
    "not_started": "recon.agents.adapter",
    "CaseScripts": "recon.agents.model_server",
    "FixedScript": "recon.agents.model_server",
    "ModelServer": "recon.agents.model_server",
    "Script": "recon.agents.model_server",
    "serve_model": "recon.agents.model_server",
    "ModelServers": "recon.agents.scripted",
    "scripted_port": "recon.agents.scripted",
    "TRACE_PARSERS": "recon.agents.trace",
    "TraceParser": "recon.agents.trace",
    "lines": "recon.agents.trace",
    "mini_swe_agent": "recon.agents.trace",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
