"""The attempt's model gateway on the host, as the docker backend runs it (issue 24).

One gateway per attempt (:func:`recon.gateway.serve_gateway`, which the plan's ``serve``
starts: the sandbox imports no gateway code, so a gateway edit re-keys no image or attempt
cell) listens on ``gateway.sock`` in the staging folder, which the container sees read-only
at ``/recon``; like the egress proxy's, the socket belongs to the agent's uid alone (mode
0600). In the container a second loopback bridge (``bridge.py``) forwards
127.0.0.1:``GATEWAY_PORT`` to it, and the agent
gets its base-URL variables set to that address and its credential variables set to the
attempt's token (:func:`agent_env`); the real key stays in the host process. The gateway
stops, its token revoked, when the agent step ends: before the offline build step.

:func:`verdict` turns the gateway's outcome into the attempt's (DESIGN §7): a spent token
or cost budget is the time limit's row, ``timeout`` with a reason starting ``model
budget:``; the gateway's harness failure (retries used up, credentials rejected) is a
``harness_failure`` whose reason starts ``harness: gateway:``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from recon.model import Outcome
from recon.model.gateway import Recording

GATEWAY_PORT = 3129
SOCKET = "gateway.sock"


class Served(Protocol):
    """A running gateway (:class:`recon.gateway.RunningGateway`): its recording so far."""

    def recording(self) -> Recording: ...


@dataclass(frozen=True)
class GatewayPlan:
    """The gateway an attempt gets: ``serve`` starts it on a unix socket path (its token
    revoked when the block ends), ``token`` is the per-attempt token, ``base_urls`` the
    agent's base-URL variables with the path each ends in, ``token_vars`` the variables
    that hold the token."""

    serve: Callable[[Path], AbstractContextManager[Served]] = field(repr=False)
    token: str = field(repr=False)
    base_urls: Mapping[str, str] = field(default_factory=dict)
    token_vars: Sequence[str] = ()


def agent_env(plan: GatewayPlan) -> dict[str, str]:
    """What the agent's environment gets: the gateway's in-container address and the token."""
    address = f"http://127.0.0.1:{GATEWAY_PORT}"
    env = {name: address + path for name, path in plan.base_urls.items()}
    env.update({name: plan.token for name in plan.token_vars})
    return env


@dataclass
class AttemptGateway:
    """One attempt's running gateway; :meth:`stop` revokes the token and keeps the
    recording (idempotent)."""

    plan: GatewayPlan
    stage: Path
    uid: int | None = None
    recording: Recording | None = None
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    _running: Served | None = None

    def __enter__(self) -> AttemptGateway:
        path = self.stage / SOCKET
        self._running = self._stack.enter_context(self.plan.serve(path))
        if self.uid is not None:
            os.chown(path, self.uid, self.uid)
        path.chmod(0o600)
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> Recording | None:
        if self.recording is None and self._running is not None:
            self.recording = self._running.recording()
            self._stack.close()
            with contextlib.suppress(FileNotFoundError):
                (self.stage / SOCKET).unlink()
        return self.recording


def verdict(recording: Recording | None) -> tuple[Outcome, str] | None:
    """The attempt's outcome when its gateway stopped it; None when it did not."""
    if recording is None or recording.outcome is None:
        return None
    reason = recording.outcome.reason
    if recording.outcome.kind == "budget":
        return "timeout", f"model budget: {reason}"
    return "harness_failure", f"harness: gateway: {reason}"
