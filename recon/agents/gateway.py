"""The model gateway an entry's attempt gets (issue 24): which upstream, which budget, which
variables, from the entry alone (and the host environment, for a live key).

An entry opts in with ``agent.gateway`` (its agent's base-URL variables). Its
``model.provider`` picks the upstream (:func:`recon.gateway.choose`): ``scripted`` answers
every case's ``faithful`` script under ``entries/scripted/answers/`` in process, in every
protocol; a vendor gets the live upstream, whose key is read from the host environment now,
from the entry's first credential (or the vendor's usual variable when it names none). The
token goes into each of ``agent.credentials`` (or that usual variable) in the sandbox. The
budget is ``budget.tokens`` and ``budget.cost_usd``; the prices are the pinned table's.
With ``replay`` (``recon replay``), whatever the provider, the attempt's recording answers
instead (:class:`~recon.gateway.ReplayUpstream`): no model host, no key; the token goes
into the same variables as on the recorded run.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from recon.agents.model_server import CaseScripts
from recon.agents.scripted import ANSWERS, KIND
from recon.agents.tool_script import ToolScripts
from recon.errors import HarnessError
from recon.model import Entry
from recon.model.gateway import Recording
from recon.sandbox import GatewayPlan

if TYPE_CHECKING:
    from recon.gateway import GatewayConfig, LiveSettings, RunningGateway


def uses_gateway(entry: Entry) -> bool:
    return bool(entry.agent.gateway)


def gateway_plan(
    entry: Entry,
    entries_dir: Path,
    environ: Mapping[str, str],
    replay: Recording | None = None,
    live: LiveSettings | None = None,
) -> GatewayPlan:
    """The attempt's gateway (``replay``: answered from that recording): raises
    :class:`~recon.errors.ConfigError` for an unknown provider and
    :class:`~recon.errors.HarnessError` for a missing key or script. ``live``: where each
    vendor is and the extra CA (``RECON_*``, harness-side); by default, the vendors' own
    hosts."""
    from recon.gateway import (
        Credential,
        GatewayConfig,
        Limits,
        LiveSettings,
        LiveUpstream,
        ReplayUpstream,
        ScriptedUpstream,
        load_prices,
        prices_digest,
    )
    from recon.gateway.choose import VENDORS, choose
    from recon.gateway.upstream import Upstream

    provider = entry.model.provider
    choice = choose(provider, f"entries/{entry.id}.yaml", replay=replay is not None)
    token_vars = list(entry.agent.credentials)
    upstream: Upstream
    if choice.kind == "replay" and replay is not None:
        upstream = ReplayUpstream.of(replay.exchanges)
        token_vars = token_vars or ([VENDORS[provider][2]] if provider in VENDORS else [])
    elif choice.kind == "scripted":
        answers = entries_dir / ANSWERS
        upstream = ScriptedUpstream(
            CaseScripts.from_answers(answers, KIND), tools=ToolScripts.from_answers(answers, KIND)
        )
    elif choice.kind == "live" and choice.provider and choice.credential:
        variable = token_vars[0] if token_vars else choice.credential
        live = live or LiveSettings()
        credential = Credential.from_env(variable, environ)
        upstream = LiveUpstream(live.base_url(choice.provider), credential, live.ca)
        token_vars = token_vars or [choice.credential]
    else:
        raise HarnessError(
            f"entries/{entry.id}.yaml: model.provider {entry.model.provider!r} has no model "
            "for the gateway to reach; remove agent.gateway"
        )
    config = GatewayConfig(
        upstream=upstream,
        prices=load_prices(),
        prices_digest=prices_digest(),
        limits=Limits(tokens=entry.budget.tokens, cost_usd=entry.budget.cost_usd),
    )
    return plan_of(config, entry.agent.gateway, token_vars)


def plan_of(
    config: GatewayConfig, base_urls: Mapping[str, str], token_vars: list[str]
) -> GatewayPlan:
    """The docker backend's plan for serving ``config`` on a unix socket."""
    from recon.gateway import serve_gateway

    def serve(socket: Path) -> AbstractContextManager[RunningGateway]:
        return serve_gateway(config, socket=socket)

    return GatewayPlan(serve, config.token, dict(base_urls), token_vars)
