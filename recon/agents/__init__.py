"""recon.agents: agent adapters. One generic command-template adapter drives every entry
(scripted agents, mini-swe-agent, Claude Code, Codex CLI); trace parsers read their counts."""

from recon.agents.adapter import CREDENTIALS_MISSING, CommandAdapter, Prepared, not_started
from recon.agents.trace import TRACE_PARSERS, TraceParser, lines, mini_swe_agent

__all__ = [
    "CREDENTIALS_MISSING",
    "TRACE_PARSERS",
    "CommandAdapter",
    "Prepared",
    "TraceParser",
    "lines",
    "mini_swe_agent",
    "not_started",
]
