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


class Bootstrap(Strict):
    """The seeded bootstrap behind every interval of the release JSON (95%, percentile)."""

    seed: int = Field(default=0, ge=0, le=2**32 - 1)
    resamples: int = Field(default=2000, ge=100, le=100_000)


class Aggregation(Strict):
    rule: Literal["case-mean-v1"] = "case-mean-v1"
    bootstrap: Bootstrap = Field(default_factory=Bootstrap)


class ReleaseDef(Versioned):
    id: Id
    title: str = Field(max_length=200)
    cases: list[Id] = Field(min_length=1, max_length=1000)
    entries: list[Id] = Field(min_length=1, max_length=1000)
    protocol: Protocol
    aggregation: Aggregation = Field(default_factory=Aggregation)
    calibration: Id | None = None
    """A fitted calibration (``releases/calibrations/<id>.yaml``, sealed): its weights
    replace each case's sealed weights in the grade cells, and its thresholds, where it
    gives one, the case's own (``recon calibrate fit``)."""

    @model_validator(mode="after")
    def _each_once(self) -> ReleaseDef:
        for label in ("cases", "entries"):
            ids: list[str] = getattr(self, label)
            twice = next((i for i in ids if ids.count(i) > 1), None)
            if twice is not None:
                raise ValueError(f"{label}: {twice!r} is listed twice; list each one once")
        return self

    def attempt_name(self, entry: str, case: str, index: int) -> str:
        """The attempt cell's name: ``<protocol>.<entry>.<case>.<index>``."""
        return f"{self.protocol.name}.{entry}.{case}.{index}"

    def attempt_names(self) -> list[str]:
        return [
            self.attempt_name(entry, case, index)
            for case in self.cases
            for entry in self.entries
            for index in range(self.protocol.repeats)
        ]
