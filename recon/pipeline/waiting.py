"""A cell waiting for resources no live node of the cluster offers: when to say so, what to
say, when to give up. Pure: the Ray executor (:mod:`recon.pipeline.raycluster`) feeds
:class:`Watch` the time and the live nodes' resources at each poll and acts on its
:class:`Step`.

A cell is *starved* while no single live node offers every resource it needs (a node's
total, not what is free now: a cell queued behind others that fit is not starved). Once
starved for ``wait_s`` (default 60 s) recon prints one line, again whenever what the
cluster offers changes::

    [recon] waiting capture:demo-native.scripted-starter.html5-boilerplate.0: needs
        {CPU: 1, browser: 1}; the cluster offers {CPU: 2} on 1 node(s)    (on one line)

and ``recon status`` shows the cell as waiting for resources, with no eta. Starved for
``give_up_s`` (default 30 minutes) the cell gives up
(:class:`~recon.errors.ResourcesUnavailable`, exit 75); so does every other starved cell
once one has, since the build is stopping anyway.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from recon.errors import ConfigError
from recon.model import WaitingCell
from recon.project.settings import seconds as parse_seconds

MiB = 1 << 20
WAIT_S = 60.0
GIVE_UP_S = 1800.0
SHOWN = ("CPU", "memory", "docker", "browser")  # what a line names besides what is needed


@dataclass(frozen=True)
class Limits:
    """``wait_s``: starved this long, say so; ``give_up_s``: starved this long, stop."""

    wait_s: float = WAIT_S
    give_up_s: float = GIVE_UP_S

    @classmethod
    def parse(
        cls, wait_s: str | None, give_up_s: str | None, defaults: Limits | None = None
    ) -> Limits:
        """From doit variables, else ``defaults`` (``RECON_RAY_WAIT_S``/
        ``RECON_RAY_GIVE_UP_S``, the caller picks); one line naming the setting when a
        value is not a number of seconds."""
        base = defaults or cls()
        wait = seconds("wait_s", wait_s, base.wait_s)
        give_up = seconds("give_up_s", give_up_s, base.give_up_s)
        if give_up < wait:
            raise ConfigError(
                f"give_up_s={give_up:g}: must be at least wait_s ({wait:g}): a cell says it is "
                "waiting before the build gives up on it"
            )
        return cls(wait, give_up)


def seconds(name: str, text: str | None, default: float) -> float:
    if text is None or not text.strip():
        return default
    return parse_seconds(name, text, f" (e.g. `{name}={default:g}`)")


def demand(wanted: Mapping[str, Any]) -> dict[str, float]:
    """The resources a task asks for, by Ray's names, from its options (``num_cpus``,
    ``memory``, ``resources``); a task asks for one CPU unless told otherwise."""
    found = {"CPU": float(wanted.get("num_cpus", 1)), "memory": float(wanted.get("memory", 0))}
    found |= {name: float(n) for name, n in wanted.get("resources", {}).items()}
    return {name: n for name, n in found.items() if n > 0}


def live_offers(nodes: Iterable[Mapping[str, Any]]) -> list[dict[str, float]]:
    """Each live node's total resources, from ``ray.nodes()``."""
    return [dict(n.get("Resources") or {}) for n in nodes if n.get("Alive")]


def fits(needs: Mapping[str, float], offer: Mapping[str, float]) -> bool:
    return all(offer.get(name, 0.0) + 1e-9 >= n for name, n in needs.items())


def summed(offers: Iterable[Mapping[str, float]], names: Iterable[str]) -> dict[str, float]:
    """The offers summed, for ``names`` only (a node's own ``node:<ip>`` and the object
    store are not what a cell asks for)."""
    found: dict[str, float] = {}
    for offer in offers:
        for name in names:
            if name in offer:
                found[name] = found.get(name, 0.0) + offer[name]
    return found


def shown(resources: Mapping[str, float]) -> str:
    """``{CPU: 1, browser: 1, memory: 1024 MiB}``."""
    parts = [f"{name}: {n / MiB:.0f} MiB" if name == "memory" else f"{name}: {n:g}"
             for name, n in resources.items()]  # fmt: skip
    return "{" + ", ".join(parts) + "}"


def waiting_line(cell: str, state: WaitingCell) -> str:
    return (
        f"[recon] waiting {cell}: needs {shown(state.needs)}; the cluster offers "
        f"{shown(state.offers)} on {state.nodes} node(s)"
    )


def give_up_message(state: WaitingCell, starved_s: float, stopping: bool) -> str:
    """Why the cell stops and how to resume (the CLI prefixes the cell id)."""
    custom = {n: v for n, v in state.needs.items() if n not in ("CPU", "memory")}
    start = "`ray start --address=<head>"
    start += f" --num-cpus={state.needs.get('CPU', 1):g}" if "CPU" in state.needs else ""
    if custom:
        start += " --resources='{" + ", ".join(f'"{n}": {v:g}' for n, v in custom.items()) + "}'"
    why = "another cell gave up and the build stops" if stopping else "limit give_up_s"
    return (
        f"waited {starved_s:.0f} s ({why}) for resources no live node offers: needs "
        f"{shown(state.needs)}; the cluster offers {shown(state.offers)} on {state.nodes} "
        f"node(s). The build stops (exit 75); finished cells are kept. Start a node that "
        f"offers them ({start}`) and run the same command again to resume"
    )


@dataclass(frozen=True)
class Step:
    """What one poll decided: a line to print, the cell's new waiting state (``changed``:
    the snapshot must say so; None: not waiting), or a message to give up with."""

    line: str | None = None
    changed: bool = False
    state: WaitingCell | None = None
    give_up: str | None = None


class Watch:
    """One submitted cell's wait; ``observe`` at each poll, with the unix time."""

    def __init__(self, cell: str, needs: dict[str, float], limits: Limits) -> None:
        self.cell = cell
        self.needs = needs
        self.limits = limits
        self.since: float | None = None  # when it was first seen starved
        self.state: WaitingCell | None = None  # what was said, while waiting

    def observe(self, now: float, offers: list[dict[str, float]], stopping: bool = False) -> Step:
        if any(fits(self.needs, offer) for offer in offers):
            was, self.since, self.state = self.state, None, None
            return Step(changed=was is not None)
        if self.since is None:
            self.since = now
        starved = now - self.since
        names = [*self.needs, *(n for n in SHOWN if n not in self.needs)]
        state = WaitingCell(needs=self.needs, offers=summed(offers, names), nodes=len(offers),
                            since=round(self.since, 3))  # fmt: skip
        if starved >= self.limits.give_up_s or stopping:
            return Step(give_up=give_up_message(state, starved, stopping))
        if starved < self.limits.wait_s or _same(self.state, state):
            return Step()
        self.state = state
        return Step(line=waiting_line(self.cell, state), changed=True, state=state)


def _same(said: WaitingCell | None, now: WaitingCell) -> bool:
    return said is not None and (said.offers, said.nodes) == (now.offers, now.nodes)
