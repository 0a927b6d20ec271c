"""recon.agents: agent adapters. One generic command-template adapter drives every entry
(scripted agents, mini-swe-agent, Claude Code, Codex CLI); trace parsers read their counts;
the scripted model server stands in for a model API, started on demand for the entries
whose model provider is ``scripted``."""

from recon.agents.adapter import CREDENTIALS_MISSING, CommandAdapter, Prepared, not_started
from recon.agents.model_server import CaseScripts, FixedScript, ModelServer, Script, serve_model
from recon.agents.scripted import ModelServers, scripted_port
from recon.agents.trace import TRACE_PARSERS, TraceParser, lines, mini_swe_agent

__all__ = [
    "CREDENTIALS_MISSING",
    "TRACE_PARSERS",
    "CaseScripts",
    "CommandAdapter",
    "FixedScript",
    "ModelServer",
    "ModelServers",
    "Prepared",
    "Script",
    "TraceParser",
    "lines",
    "mini_swe_agent",
    "not_started",
    "scripted_port",
    "serve_model",
]
