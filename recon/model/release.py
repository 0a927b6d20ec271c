"""releases/<id>.yaml: a frozen split, protocol, entry set and aggregation rule."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from recon.model.base import Strict, Versioned
from recon.model.values import Id


class Retry(Strict):
    """How many times a harness-failed attempt is re-run (0 to 10); no other outcome is."""

    harness_failure: int = Field(default=2, ge=0, le=10)


class Protocol(Strict):
    """Repeats per case, the case time limit (at most a day), the backend, whether the
    release is formal, and the retry rule. What an attempt may reach over the network is
    the entry's ``sandbox.egress``."""

    name: Id
    repeats: int = Field(ge=1, le=100)
    time_limit_s: int = Field(ge=1, le=86_400)
    backend: Literal["native", "docker"]
    formal: bool
    retry: Retry = Field(default_factory=Retry)

    @model_validator(mode="after")
    def _native_is_informal(self) -> Protocol:
        if self.formal and self.backend == "native":
            raise ValueError(
                "a formal protocol requires backend docker; native attempts are non-formal"
            )
        return self


class Aggregation(Strict):
    rule: Literal["case-mean-v1"] = "case-mean-v1"


class ReleaseDef(Versioned):
    id: Id
    title: str = Field(max_length=200)
    cases: list[Id] = Field(min_length=1, max_length=1000)
    entries: list[Id] = Field(min_length=1, max_length=1000)
    protocol: Protocol
    aggregation: Aggregation = Field(default_factory=Aggregation)
