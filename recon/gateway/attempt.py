"""One attempt's gateway state: its token, meter, budget, outcome and recorded exchanges.

Pure bookkeeping, no socket: the server asks it whether a caller is the attempt, whether a
call may go upstream, and tells it what each call was. The decisions are
:mod:`recon.gateway.meter` and :mod:`recon.gateway.failures`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from recon.gateway.credential import scrub
from recon.gateway.failures import RetryPolicy
from recon.gateway.meter import Limits, Meter, spent, unpriced
from recon.gateway.prices import price_for
from recon.gateway.protocols import Call, presented_tokens
from recon.gateway.upstream import Upstream
from recon.model.gateway import Exchange, GatewayOutcome, PriceTable, Recording, Usage


def new_token() -> str:
    """A per-attempt token: random, valid for that attempt's gateway only."""
    return secrets.token_urlsafe(32)


@dataclass
class GatewayConfig:
    """What one attempt's gateway needs; the key, if any, is its upstream's."""

    upstream: Upstream
    prices: PriceTable
    prices_digest: str
    token: str = field(default_factory=new_token, repr=False)
    limits: Limits = field(default_factory=Limits)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    prices_name: str = "recon/gateway/prices.json"


@dataclass
class Draft:
    """An exchange being recorded: what is known when the call arrives."""

    call: Call
    number: int
    path: str
    request_headers: dict[str, str]
    request: Any
    started_s: float
    raw: bytes | None = field(default=None, repr=False)
    """The agent's body as it came, when it goes upstream unchanged (not re-encoded)."""

    def exchange(self, **rest: Any) -> Exchange:
        call = self.call
        return Exchange(
            turn=self.number,
            protocol=call.protocol,
            endpoint=call.endpoint,
            model=call.model,
            stream=call.stream,
            path=self.path,
            request_headers=self.request_headers,
            request=self.request,
            started_s=self.started_s,
            **rest,
        )


@dataclass
class Attempt:
    config: GatewayConfig
    meter: Meter = field(default_factory=Meter)
    exchanges: list[Exchange] = field(default_factory=list)
    outcome: GatewayOutcome | None = None
    revoked: bool = False
    calls: int = 0
    started: float = field(default_factory=time.monotonic)

    def authorized(self, headers: Mapping[str, str], query: Mapping[str, str]) -> bool:
        if self.revoked:
            return False
        tokens = presented_tokens(headers, query)
        return any(secrets.compare_digest(t.encode(), self.config.token.encode()) for t in tokens)

    def scrub(self, text: str) -> str:
        """``text`` without the upstream's key: before anything is returned, kept or logged."""
        return scrub(text, self.config.upstream.credential)

    def credential_name(self) -> str:
        credential = self.config.upstream.credential
        return credential.variable if credential else "the entry's credential"

    def next_number(self) -> int:
        self.calls += 1
        return self.calls

    def refusal(self, call: Call) -> str | None:
        """Why ``call`` may not go upstream: the attempt has stopped, or would have to."""
        if self.outcome is not None:
            return self.outcome.reason
        budget = spent(self.meter, self.config.limits)
        if budget is not None:
            self.stop("budget", budget)
            return budget
        price = price_for(self.config.prices, call.provider, call.model)
        problem = unpriced(call.model, self.config.limits, price, self.config.prices_name)
        if problem is not None and call.endpoint == "generate":
            self.stop("harness_failure", problem)
            return problem
        return None

    def stop(self, kind: Literal["budget", "harness_failure"], reason: str) -> None:
        """The first reason the attempt stopped is its outcome."""
        if self.outcome is None:
            self.outcome = GatewayOutcome(kind=kind, reason=reason)

    def metered(self, call: Call, usage: Usage | None) -> float | None:
        """Count a call's usage; past the budget, the attempt's outcome says so."""
        price = price_for(self.config.prices, call.provider, call.model)
        cost = self.meter.add(usage, price)
        budget = spent(self.meter, self.config.limits)
        if budget is not None:
            self.stop("budget", budget)
        return cost

    def record(self, exchange: Exchange) -> None:
        self.exchanges.append(exchange)

    def recording(self) -> Recording:
        return Recording(
            upstream=self.config.upstream.kind,
            prices_digest=self.config.prices_digest,
            exchanges=sorted(self.exchanges, key=lambda e: e.turn),
            usage=self.meter.usage,
            cost_usd=self.meter.cost_usd,
            outcome=self.outcome,
        )
