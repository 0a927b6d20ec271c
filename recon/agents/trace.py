"""Trace counts (turns, tool calls, tokens) parsed from what an agent leaves behind.

Each parser takes the agent's log and its trace file (empty when it wrote none) and returns
a ``Trace``; counts an agent does not report stay ``None``. Pure functions: bytes in, counts
out. ``TRACE_PARSERS`` is the explicit registry an entry's ``agent.trace`` names.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from recon.model import Trace
from recon.sandbox import parse_trace

TraceParser = Callable[[bytes, bytes], Trace]

MINI_ACTION = r"```bash\s*\n(.*?)\n```"  # mini-swe-agent's default action_regex


def lines(log: bytes, trace_file: bytes) -> Trace:
    """``turns: N`` / ``tool_calls: N`` / ``tokens: N`` lines in the log (scripted agents)."""
    return parse_trace(log)


def mini_swe_agent(log: bytes, trace_file: bytes) -> Trace:
    """mini-swe-agent's trajectory (``mini -o FILE``): turns are model calls, tool calls the
    replies holding a bash action, tokens the sum of the usage the model API reported."""
    try:
        data = json.loads(trace_file)
    except ValueError:
        return Trace()
    if not isinstance(data, dict):
        return Trace()
    info = data.get("info") or {}
    calls = (info.get("model_stats") or {}).get("api_calls")
    regex = ((info.get("config") or {}).get("agent") or {}).get("action_regex") or MINI_ACTION
    replies = [m for m in data.get("messages") or [] if m.get("role") == "assistant"]
    actions = sum(1 for m in replies if re.search(regex, str(m.get("content", "")), re.DOTALL))
    tokens = [_tokens(m) for m in replies]
    known = [t for t in tokens if t is not None]
    return Trace(
        turns=int(calls) if isinstance(calls, int) else len(replies),
        tool_calls=actions,
        tokens=sum(known) if known else None,
    )


CODEX_TOOLS = ("command_execution", "file_change", "mcp_tool_call", "web_search")
"""The item types of ``codex exec --json`` that are a tool call of the model's."""


def codex(log: bytes, trace_file: bytes) -> Trace:
    """``codex exec --json``'s events in the log: tool calls are the completed tool items
    (commands, patches, MCP calls, searches), turns those plus the model's messages (each
    reply of the model is one or the other), tokens the input and output of every
    ``turn.completed`` (cached input is part of the input)."""
    tools = messages = 0
    tokens: int | None = None
    for event in _json_lines(log):
        found = event.get("item")
        item: dict[str, Any] = found if isinstance(found, dict) else {}
        if event.get("type") == "item.completed" and item.get("type") in CODEX_TOOLS:
            tools += 1
        elif event.get("type") == "item.completed" and item.get("type") == "agent_message":
            messages += 1
        elif event.get("type") == "turn.completed" and isinstance(event.get("usage"), dict):
            usage = event["usage"]
            counts = [usage.get("input_tokens"), usage.get("output_tokens")]
            spent = sum(c for c in counts if isinstance(c, int))
            tokens = spent if tokens is None else tokens + spent
    return Trace(turns=tools + messages, tool_calls=tools, tokens=tokens)


def _json_lines(log: bytes) -> list[dict[str, Any]]:
    found = []
    for line in log.splitlines():
        if not line.startswith(b"{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            found.append(event)
    return found


def _tokens(message: dict[str, Any]) -> int | None:
    usage = ((message.get("extra") or {}).get("response") or {}).get("usage") or {}
    total = usage.get("total_tokens")
    return int(total) if isinstance(total, int) else None


def claude_code(log: bytes, trace_file: bytes) -> Trace:
    """Claude Code's result JSON (``--output-format json``, the last JSON object on its
    stdout with ``"type": "result"``): turns are its ``num_turns``, tokens the sum of its
    ``usage`` counts (input, output, cache reads and writes), its cost its
    ``total_cost_usd`` (its own price list's, shown beside the gateway's). It reports no tool
    calls."""
    result = claude_result(log)
    if result is None:
        return Trace()
    turns = result.get("num_turns")
    usage = result.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    counts = [usage.get(k) for k in CLAUDE_USAGE]
    known = [c for c in counts if isinstance(c, int) and not isinstance(c, bool)]
    return Trace(
        turns=turns if isinstance(turns, int) and turns >= 0 else None,
        tokens=sum(known) if known else None,
        cost_usd=_cost(result.get("total_cost_usd")),
    )


def _cost(value: Any) -> float | None:
    """A reported cost: a finite number of dollars, not below zero."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value < float("inf") else None


CLAUDE_USAGE = (
    "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
)  # fmt: skip


def claude_result(log: bytes) -> dict[str, Any] | None:
    """The last ``{"type": "result", ...}`` line of Claude Code's output, if any."""
    for line in reversed(log.decode("utf-8", errors="replace").splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and data.get("type") == "result":
            return data
    return None


def gemini_cli(log: bytes, trace_file: bytes) -> Trace:
    """Gemini CLI's ``--output-format json`` report (the last JSON object in the log with a
    ``stats`` member; it is printed indented, over many lines): turns are the model requests
    of every model it used (``stats.models.*.api.totalRequests``), tool calls
    ``stats.tools.totalCalls``, tokens the sum of each model's ``tokens.total`` (prompt,
    cached part included, plus candidates and thoughts)."""
    stats = gemini_stats(log)
    if stats is None:
        return Trace()
    models = [m for m in (stats.get("models") or {}).values() if isinstance(m, dict)]
    requests = [(m.get("api") or {}).get("totalRequests") for m in models]
    totals = [(m.get("tokens") or {}).get("total") for m in models]
    calls = (stats.get("tools") or {}).get("totalCalls")
    return Trace(
        turns=sum(r for r in requests if isinstance(r, int)) if models else None,
        tool_calls=calls if isinstance(calls, int) else None,
        tokens=sum(t for t in totals if isinstance(t, int)) if models else None,
    )


def gemini_stats(log: bytes) -> dict[str, Any] | None:
    """The ``stats`` of the last JSON object in ``log`` that starts a line and holds one."""
    text = log.decode("utf-8", errors="replace")
    decoder = json.JSONDecoder()
    found = None
    for match in re.finditer(r"(?m)^\{", text):
        try:
            data, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(data, dict) and isinstance(data.get("stats"), dict):
            found = data["stats"]
    return found


AIDER_TOKENS = re.compile(r"^Tokens: (?P<counts>[^\n]*?) received\.", re.MULTILINE)
AIDER_COUNT = re.compile(r"^(\d+(?:\.\d+)?)(k?) (sent|received|cache write|cache hit)$")
AIDER_EDIT = re.compile(r"^Applied edit to ", re.MULTILINE)
AIDER_COST = re.compile(r"Cost: \$\d+(?:\.\d+)? message, \$(\d+(?:\.\d+)?) session\.")


def aider(log: bytes, trace_file: bytes) -> Trace:
    """aider's summary line after each model call (``Tokens: 596 sent, 15 received.``, then
    ``Cost: ...`` when it knows the model's price): turns are those lines, tool calls the
    ``Applied edit to FILE`` lines (its edit format is its one tool), tokens the sum of sent
    and received. Aider rounds a count of 1,000 or more (``2.3k``, ``12k``): so is the sum.
    Its cost is the session's total on its last ``Cost:`` line (its own price list's, rounded
    as it prints it; shown beside the gateway's)."""
    text = log.decode("utf-8", errors="replace")
    calls = AIDER_TOKENS.findall(text)
    tokens = 0
    for counts in calls:
        for part in f"{counts} received".split(", "):
            found = AIDER_COUNT.match(part.strip())
            if found and found.group(3) in ("sent", "received"):
                scale = 1000 if found.group(2) else 1
                tokens += round(float(found.group(1)) * scale)
    costs = AIDER_COST.findall(text)
    return Trace(
        turns=len(calls),
        tool_calls=len(AIDER_EDIT.findall(text)),
        tokens=tokens if calls else None,
        cost_usd=_cost(float(costs[-1])) if costs else None,
    )


TRACE_PARSERS: dict[str, TraceParser] = {
    "lines": lines,
    "mini-swe-agent": mini_swe_agent,
    "claude-code": claude_code,
    "codex": codex,
    "gemini-cli": gemini_cli,
    "aider": aider,
}
