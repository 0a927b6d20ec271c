"""The engine's late "paused" flag: containerd's event for a freeze can arrive after
``unpause`` returned (the fork-bomb test met it in CI), and an exec in that moment is refused
with 409 "is paused"; and runc's freeze can give up on a busy host ("unable to freeze").
The harness waits both out; anything else still fails at once."""

from __future__ import annotations

import pytest
import requests
from docker.errors import APIError

from recon.sandbox.container import Fault, _late_pause


def _refusal(status: int, message: str) -> APIError:
    response = requests.Response()
    response.status_code = status
    return APIError(message, response=response, explanation=message)


class Engine:
    """Refuses the first ``refusals`` calls with ``error``, then answers."""

    def __init__(self, refusals: int, error: APIError) -> None:
        self.refusals, self.error, self.calls = refusals, error, 0

    def exec_create(self) -> dict[str, str]:
        self.calls += 1
        if self.calls <= self.refusals:
            raise self.error
        return {"Id": "exec-1"}


def test_an_exec_refused_by_a_late_pause_is_retried_until_the_engine_settles() -> None:
    paused = _refusal(409, "Container abc is paused, unpause the container before exec")
    engine = Engine(3, paused)
    assert _late_pause(engine.exec_create) == {"Id": "exec-1"}
    assert engine.calls == 4


def test_a_pause_refused_as_already_paused_is_retried() -> None:
    engine = Engine(2, _refusal(409, "Container abc is already paused"))
    assert _late_pause(engine.exec_create) == {"Id": "exec-1"}
    assert engine.calls == 3


def test_a_pause_that_never_settles_is_the_harnesss_fault() -> None:
    engine = Engine(10**9, _refusal(409, "Container abc is paused, unpause the container"))
    with pytest.raises(Fault, match="stayed paused"):
        _late_pause(engine.exec_create, wait_s=0.2)
    assert engine.calls >= 2


def test_a_freeze_runc_gave_up_on_is_tried_again_and_one_that_never_takes_is_a_fault() -> None:
    unfrozen = _refusal(
        500,
        "Cannot pause container abc: OCI runtime pause failed: unable to freeze: unknown",
    )
    engine = Engine(2, unfrozen)
    assert _late_pause(engine.exec_create) == {"Id": "exec-1"}
    assert engine.calls == 3
    with pytest.raises(Fault, match="could not be frozen"):
        _late_pause(Engine(10**9, unfrozen).exec_create, wait_s=0.3)


@pytest.mark.parametrize(
    "error",
    [_refusal(409, "Container abc is not running"), _refusal(500, "Container abc is paused")],
)
def test_any_other_refusal_is_raised_at_once(error: APIError) -> None:
    engine = Engine(1, error)
    with pytest.raises(APIError):
        _late_pause(engine.exec_create)
    assert engine.calls == 1
