"""How the gateway classifies an upstream failure, how long it waits, what the agent sees.

- 429, 529 (overloaded), any other 5xx, 408 and a dropped connection: retried with bounded
  exponential backoff (``Retry-After`` honoured up to the cap); when the tries are used up
  the attempt is a harness (environment) failure, never a model failure;
- 401 and 403: one harness failure, "credentials rejected", naming the entry's credential
  variable; not retried;
- any other 4xx (a 400 caused by the agent's own request): passed through to the agent.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Literal

from recon.model.gateway import Protocol, Try

Verdict = Literal["ok", "retry", "credentials", "pass"]
RETRIED = frozenset({408, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """``tries`` requests at most per call; waits of ``base_s`` doubling, at most ``cap_s``."""

    tries: int = 5
    base_s: float = 1.0
    cap_s: float = 30.0


def classify(status: int | None) -> Verdict:
    """What to do with an upstream answer; ``None`` is a connection that dropped."""
    if status is None or status in RETRIED or status >= 500:
        return "retry"
    if 200 <= status < 300:
        return "ok"
    if status in (401, 403):
        return "credentials"
    return "pass"


def backoff(policy: RetryPolicy, tried: int, retry_after: str | None = None) -> float:
    """Seconds to wait after the ``tried``-th failed request (1-based)."""
    wait = policy.base_s * 2 ** (tried - 1)
    if retry_after is not None:
        with contextlib.suppress(ValueError):
            wait = max(wait, float(retry_after))
    return max(0.0, min(wait, policy.cap_s))


def exhausted(tries: list[Try]) -> str:
    """The harness failure once every try failed."""
    seen = ", ".join(str(t.status) if t.status is not None else "no answer" for t in tries)
    return f"model API unavailable: {len(tries)} tries failed ({seen}); retried per protocol"


def credentials_rejected(variable: str, status: int) -> str:
    return (
        f"credentials rejected: the model API answered {status} to the key in {variable}; "
        f"set a valid key in {variable} on the host that runs the attempt"
    )


def error_body(protocol: Protocol, status: int, message: str) -> dict[str, Any]:
    """An error in the shape the agent's client reads for its protocol."""
    kind = "authentication_error" if status == 401 else "invalid_request_error"
    if protocol == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    if protocol == "gemini":
        state = "UNAUTHENTICATED" if status == 401 else "INVALID_ARGUMENT"
        return {"error": {"code": status, "message": message, "status": state}}
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}
