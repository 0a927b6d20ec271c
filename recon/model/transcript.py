"""The transcript of a gateway attempt as the site shows it: turn by turn, without timings.

Made from the attempt's :class:`~recon.model.gateway.Recording` by
:func:`recon.site.transcript.transcript`. It keeps what the model was sent and said, its
tool calls with their results, each call's tokens and cost, refusals and the gateway's
outcome; it drops headers, raw bodies, stream events and every timing (run metadata: they
differ between two runs of the same attempt, and the site is keyed on content). Each body
is bounded: ``chars`` is its whole length, larger than ``len(text)`` when it was cut.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from recon.model.base import Strict
from recon.model.gateway import GatewayOutcome, Protocol, Usage

Count = Annotated[int, Field(ge=0)]


class Body(Strict):
    text: str
    chars: Count  # the whole body's length: more than len(text) when it was cut


class ToolUse(Strict):
    """A tool call of the model's reply and its result, from the next request that sends
    it back (None: no later request did)."""

    name: str
    arguments: Body
    result: Body | None = None


class Turn(Strict):
    """One call of the agent: what it sent since the model's last reply (the task, first),
    what the model said, and its tool calls."""

    turn: Annotated[int, Field(ge=1)]
    protocol: Protocol
    endpoint: Literal["generate", "count_tokens"]
    model: str
    stream: bool
    status: int
    sent: Body
    text: Body
    calls: list[ToolUse] = Field(default_factory=list)
    calls_left_out: Count = 0
    usage: Usage | None = None
    cost_usd: float | None = None
    refused: str | None = None


class Transcript(Strict):
    upstream: Literal["live", "scripted", "replay"]
    prices_digest: str
    usage: Usage
    cost_usd: float | None = None
    outcome: GatewayOutcome | None = None
    turns: list[Turn]
    turns_left_out: Count = 0  # past the page's bound
