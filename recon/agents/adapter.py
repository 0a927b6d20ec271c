"""The generic command-template adapter: how an entry's agent is installed, run and read.

An entry's ``agent`` block is the template (``recon.model.Agent``): an install command and a
run command with placeholders for the brief, the workspace, the evidence and a trace file,
and environment variables forwarded by name. The adapter fills the placeholders for a
backend, takes the forwarded values from the host environment at run time (they go to the
sandbox and to the log scrubber, never into a record, log or manifest), checks credentials
before anything starts, and parses trace counts afterwards. An agent that reaches its model
through the gateway (``agent.gateway``) never gets its credentials' host values: the
gateway holds them, and the sandbox gets the attempt's token instead.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from recon.agents.trace import TRACE_PARSERS
from recon.errors import HarnessError
from recon.model import Agent, Trace
from recon.model.placeholders import PLACEHOLDERS
from recon.sandbox import AttemptRun

CREDENTIALS_MISSING = "credentials missing"


@dataclass(frozen=True)
class Prepared:
    """One run of an agent, ready for a backend."""

    command: list[str]
    env: dict[str, str] = field(repr=False)  # holds forwarded values: never printed
    secrets: list[str] = field(repr=False)  # forwarded values: scrubbed from every log
    trace_file: str | None = None  # the container path of ``{trace}``, when it is used


@dataclass(frozen=True)
class CommandAdapter:
    """Turns an entry's agent template into a command, an environment and trace counts."""

    agent: Agent

    def missing_credentials(self, environ: Mapping[str, str]) -> list[str]:
        return [name for name in self.agent.credentials if not environ.get(name)]

    def credentials_reason(self, entry_id: str, environ: Mapping[str, str]) -> str | None:
        """The harness-failure reason when a credential is unset, else None."""
        missing = self.missing_credentials(environ)
        if not missing:
            return None
        names = ", ".join(missing)
        return (
            f"harness: {CREDENTIALS_MISSING}: {names} not set in the host environment "
            f"(entries/{entry_id}.yaml agent.credentials); export it and rebuild to retry"
        )

    def prepare(self, paths: Mapping[str, str], environ: Mapping[str, str]) -> Prepared:
        """Fill the placeholders with ``paths``; forward ``env`` by name from ``environ``."""
        unfilled = sorted(self.agent.placeholders() - set(paths) | set(paths) - set(PLACEHOLDERS))
        if unfilled:
            raise HarnessError(f"adapter: placeholders {unfilled} unfilled or not in the registry")
        command = [part.format(**paths) for part in self.agent.command]
        if self.agent.install:
            install = shlex.join(part.format(**paths) for part in self.agent.install)
            command = ["sh", "-c", f'{install} && exec "$@"', "recon-agent", *command]
        forwarded = {name: environ[name] for name in self.agent.env if name in environ}
        # Through the gateway a credential stays on the host: the sandbox gets the token.
        kept = set(self.agent.credentials) if self.agent.gateway else set()
        held = {n: environ[n] for n in self.agent.credentials if n in kept and n in environ}
        template = " ".join([*self.agent.command, *self.agent.install])
        trace_file = paths.get("trace") if "{trace}" in template else None
        return Prepared(
            command=command,
            env={**self.agent.set_env, **{k: v for k, v in forwarded.items() if k not in kept}},
            secrets=[value for value in {**held, **forwarded}.values() if value],
            trace_file=trace_file,
        )

    def trace(self, log: bytes, trace_file: bytes = b"") -> Trace:
        return TRACE_PARSERS[self.agent.trace](log, trace_file)


def not_started(reason: str) -> AttemptRun:
    """The run of an attempt the harness could not start (missing credentials, no offline
    store): a harness failure, retried on the next build, never scored."""
    return AttemptRun("harness_failure", reason, None, 0.0, b"", None, Trace())
