"""Upstream failures: retried, a harness failure, or the agent's own."""

from __future__ import annotations

import pytest

from recon.gateway.failures import (
    RetryPolicy,
    backoff,
    classify,
    credentials_rejected,
    error_body,
    exhausted,
)
from recon.model.gateway import Try


@pytest.mark.parametrize(
    ("status", "verdict"),
    [
        (200, "ok"),
        (429, "retry"),
        (529, "retry"),
        (500, "retry"),
        (503, "retry"),
        (None, "retry"),
        (408, "retry"),
        (401, "credentials"),
        (403, "credentials"),
        (400, "pass"),
        (404, "pass"),
        (413, "pass"),
        (422, "pass"),
    ],
)
def test_classify(status: int | None, verdict: str) -> None:
    assert classify(status) == verdict


def test_backoff_doubles_honours_retry_after_and_is_capped() -> None:
    policy = RetryPolicy(tries=5, base_s=0.5, cap_s=4.0)
    assert [backoff(policy, n) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 4.0, 4.0]
    assert backoff(policy, 1, "3") == 3.0
    assert backoff(policy, 1, "999") == 4.0
    assert backoff(policy, 1, "Wed, 21 Oct 2015 07:28:00 GMT") == 0.5


def test_messages_name_what_failed() -> None:
    tries = [Try(status=503, ms=1.0), Try(error="dropped", ms=2.0)]
    assert exhausted(tries) == (
        "model API unavailable: 2 tries failed (503, no answer); retried per protocol"
    )
    assert "credentials rejected" in credentials_rejected("ANTHROPIC_API_KEY", 401)
    assert "ANTHROPIC_API_KEY" in credentials_rejected("ANTHROPIC_API_KEY", 401)


def test_errors_have_each_clients_shape() -> None:
    assert error_body("anthropic", 400, "m") == {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": "m"},
    }
    assert error_body("gemini", 401, "m")["error"]["status"] == "UNAUTHENTICATED"
    assert error_body("chat", 401, "m")["error"]["type"] == "authentication_error"
