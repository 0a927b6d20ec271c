"""Metering and budgets: what a call cost, what the attempt has used, whether it may go on.

Pure: usage and prices in, numbers and decisions out. Tokens are every billed token
(``Usage.tokens``); a call's cost is each of its counts times that model's pinned price.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from recon.model.gateway import ModelPrice, Usage


@dataclass(frozen=True)
class Limits:
    """An attempt's model budget (``budget.tokens``, ``budget.cost_usd``); None: no cap."""

    tokens: int | None = None
    cost_usd: float | None = None


def cost(usage: Usage, price: ModelPrice) -> float:
    """US dollars for one call."""
    return math.fsum(
        (
            usage.input * price.input,
            usage.output * price.output,
            usage.cache_read * price.cache_read,
            usage.cache_write * price.cache_write,
        )
    )


@dataclass
class Meter:
    """The running totals of one attempt. ``cost_usd`` is None once a call could not be
    priced (its model is not in the table): the total is then unknown, not smaller."""

    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0
    calls: int = 0
    _costs: list[float] = field(default_factory=list)

    def add(self, usage: Usage | None, price: ModelPrice | None) -> float | None:
        """Count one call; its cost, or None when it had no usage or no price."""
        self.calls += 1
        if usage is None:
            return None
        self.usage = self.usage + usage
        if price is None:
            self.cost_usd = None
            return None
        spent = cost(usage, price)
        self._costs.append(spent)
        if self.cost_usd is not None:
            self.cost_usd = math.fsum(self._costs)
        return spent


def spent(meter: Meter, limits: Limits) -> str | None:
    """Why the budget is spent, or None while calls may go on."""
    if limits.tokens is not None and meter.usage.tokens >= limits.tokens:
        return (
            f"token budget spent: {meter.usage.tokens} of {limits.tokens} tokens "
            f"(budget.tokens) after {_calls(meter.calls)}"
        )
    used, limit = meter.cost_usd, limits.cost_usd
    if limit is not None and used is not None and used >= limit:
        return (
            f"cost budget spent: ${used:.6f} of ${limit:.6f} "
            f"(budget.cost_usd) after {_calls(meter.calls)}"
        )
    return None


def _calls(n: int) -> str:
    return f"{n} call" if n == 1 else f"{n} calls"


def unpriced(model: str, limits: Limits, price: ModelPrice | None, table: str) -> str | None:
    """Why a call cannot be made under a cost budget: its model has no pinned price."""
    if limits.cost_usd is None or price is not None:
        return None
    return (
        f"model {model!r} has no price in {table}, so the cost budget (budget.cost_usd) "
        "cannot be kept; regenerate the table or drop the cost budget"
    )
