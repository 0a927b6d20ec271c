"""One attempt's gateway state, without a socket: who may call, what may go upstream, and
the first reason the attempt stopped."""

from __future__ import annotations

from recon.gateway.attempt import Attempt
from recon.gateway.credential import Credential, scrub
from recon.gateway.meter import Limits
from recon.gateway.protocols import Call
from recon.gateway.upstream import ScriptedUpstream
from recon.model.gateway import Usage
from tests.gateway.conftest import SCRIPT, config

SONNET = Call("anthropic", "generate", "claude-sonnet-4-5", False)


def _attempt(**kw: object) -> Attempt:
    return Attempt(config(ScriptedUpstream(SCRIPT), **kw))


def test_only_the_attempts_token_is_accepted_until_it_is_revoked() -> None:
    attempt = _attempt(token="tok")
    assert attempt.authorized({"x-api-key": "tok"}, {})
    assert attempt.authorized({}, {"key": "tok"})
    assert not attempt.authorized({"x-api-key": "other"}, {"key": "also-not"})
    attempt.revoked = True
    assert not attempt.authorized({"x-api-key": "tok"}, {})


def test_the_call_that_crosses_the_budget_completes_and_the_next_is_refused() -> None:
    attempt = _attempt(limits=Limits(tokens=100))
    assert attempt.refusal(SONNET) is None
    attempt.metered(SONNET, Usage(input=90, output=20))
    assert attempt.outcome is not None and attempt.outcome.kind == "budget"
    assert attempt.refusal(SONNET) == attempt.outcome.reason
    assert attempt.outcome.reason == (
        "token budget spent: 110 of 100 tokens (budget.tokens) after 1 call"
    )


def test_the_first_reason_is_the_outcome() -> None:
    attempt = _attempt()
    attempt.stop("harness_failure", "model API unavailable")
    attempt.stop("budget", "token budget spent")
    assert attempt.outcome is not None and attempt.outcome.reason == "model API unavailable"


def test_cost_is_priced_per_model_and_an_unpriced_one_is_refused_under_a_cost_budget() -> None:
    attempt = _attempt(limits=Limits(cost_usd=10.0))
    cost = attempt.metered(SONNET, Usage(input=1_000_000))
    assert cost == 3.0 and attempt.meter.cost_usd == 3.0
    count = Call("anthropic", "count_tokens", "not-priced", False)
    assert attempt.refusal(count) is None, "counting tokens costs nothing"
    unknown = Call("anthropic", "generate", "not-priced", False)
    assert "has no price" in (attempt.refusal(unknown) or "")
    assert attempt.outcome is not None and attempt.outcome.kind == "harness_failure"


def test_the_recording_holds_the_totals_and_the_prices_digest() -> None:
    attempt = _attempt()
    attempt.metered(SONNET, Usage(input=1, output=2, cache_read=3, cache_write=4))
    recording = attempt.recording()
    assert recording.usage.tokens == 10 and recording.upstream == "scripted"
    assert recording.prices_digest == attempt.config.prices_digest and recording.exchanges == []


def test_scrub_hides_the_key_and_nothing_else() -> None:
    key = Credential("OPENAI_API_KEY", "sk-secret")
    assert scrub("bad key sk-secret!", key) == "bad key [credential]!"
    assert scrub("sk-secret", None) == "sk-secret"
    assert "sk-secret" not in repr(key)
