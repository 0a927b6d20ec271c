"""Cost is tokens times pinned prices; budgets refuse once spent."""

from __future__ import annotations

import pytest

from recon.gateway.meter import Limits, Meter, cost, spent, unpriced
from recon.model.gateway import ModelPrice, Usage

PRICE = ModelPrice(input=3e-06, output=1.5e-05, cache_read=3e-07, cache_write=3.75e-06)


def test_cost_prices_each_count_once() -> None:
    usage = Usage(input=1000, output=200, cache_read=5000, cache_write=100, reasoning=50)
    assert cost(usage, PRICE) == pytest.approx(
        1000 * 3e-06 + 200 * 1.5e-05 + 5000 * 3e-07 + 100 * 3.75e-06, rel=1e-15
    )


def test_meter_totals_and_an_unpriced_call_makes_the_cost_unknown() -> None:
    meter = Meter()
    assert meter.add(Usage(input=10, output=5), PRICE) == pytest.approx(10 * 3e-06 + 5 * 1.5e-05)
    assert meter.add(None, PRICE) is None
    assert (meter.calls, meter.usage.tokens) == (2, 15)
    meter.add(Usage(input=1), None)
    assert meter.cost_usd is None and meter.usage.tokens == 16


def test_token_budget() -> None:
    meter = Meter()
    assert spent(meter, Limits(tokens=100)) is None
    meter.add(Usage(input=60, output=40), PRICE)
    reason = spent(meter, Limits(tokens=100))
    assert reason == "token budget spent: 100 of 100 tokens (budget.tokens) after 1 call"


def test_cost_budget() -> None:
    meter = Meter()
    meter.add(Usage(output=1000), PRICE)
    assert spent(meter, Limits(cost_usd=0.02)) is None
    assert "cost budget spent" in (spent(meter, Limits(cost_usd=0.015)) or "")


def test_an_unpriced_model_cannot_run_under_a_cost_budget() -> None:
    assert unpriced("m", Limits(), None, "prices.json") is None
    assert unpriced("m", Limits(cost_usd=1.0), PRICE, "prices.json") is None
    assert "'m' has no price in prices.json" in (
        unpriced("m", Limits(cost_usd=1.0), None, "prices.json") or ""
    )
