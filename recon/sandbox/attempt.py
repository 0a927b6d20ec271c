"""What a backend answers for one attempt, whatever happened: ``AttemptRun``.

Every backend turns every failure into an outcome with a reason (DESIGN §7), never an
exception: the Candidate's failures are ``missing``, ``ungradeable`` or ``timeout``; the
engine's or the environment's are ``harness_failure`` with a reason starting ``harness:``;
an exception the harness did not expect is a ``harness_failure`` whose reason starts
``harness bug:`` and names the exception, so that it is fixed rather than retried blindly.
``refusals`` lists what the build output held that the harness refused (``outputs.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from recon.model import Outcome, Trace


@dataclass
class AttemptRun:
    outcome: Outcome
    reason: str
    exit_code: int | None
    duration_s: float
    logs: bytes
    output: Path | None
    trace: Trace
    refusals: list[str] = field(default_factory=list)


# At most 18 digits: a longer number is no count (and Python refuses to parse 4,301 digits).
_TRACE = re.compile(rb"^(turns|tool_calls|tokens):\s*(\d{1,18})\s*$", re.MULTILINE)


def parse_trace(log: bytes) -> Trace:
    """Trace counts an agent reports as ``turns: N`` / ``tool_calls: N`` / ``tokens: N`` lines."""
    found = {m.group(1).decode(): int(m.group(2)) for m in _TRACE.finditer(log)}
    return Trace(**found)


def harness_bug(err: BaseException) -> str:
    """The reason of an attempt cut short by an exception the harness did not expect."""
    text = str(err).strip().splitlines()
    detail = f": {text[0][:400]}" if text else ""
    return f"harness bug: {type(err).__name__}{detail}"
