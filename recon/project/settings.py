"""The harness's settings: every ``RECON_*`` variable, read from the environment once.

An entry point (``recon``'s ``main``, ``dodo.py``, a Ray worker's job) calls
:meth:`Settings.from_env` once and passes the result in; no other module reads a
``RECON_*`` variable, and nothing reads the environment at import time
(tests/project/test_settings.py checks both). A bad value is one
:class:`~recon.errors.ConfigError` naming the variable and the fix (exit 2).

==========================  =========================================================
``RECON_STORE``             the store (default: ``<project root>/store``)
``RECON_SEALED``            sealed material kept outside the repository
``RECON_VERIFY_ON_READ``    ``0`` reads store objects unverified (to measure the cost)
``RECON_DEPS``              the offline dependency store (default: ``<store>/deps``)
``RECON_BROWSERS``          browsers a render pool starts at most (default: the cores)
``RECON_CHROMIUM``          the chromium executable (default: ``/usr/bin/chromium``)
``RECON_EXECUTOR``          ``local`` or ``ray``, unless ``doit ... executor=`` says
``RECON_RAY_ADDRESS``       the Ray cluster, unless ``address=`` says
``RECON_RAY_WAIT_S``        seconds a starved cell waits before recon says so (60)
``RECON_RAY_GIVE_UP_S``     seconds a starved cell waits before the build stops (1800)
``RECON_PROGRESS``          ``auto``, ``plain`` or ``rich``, unless ``progress=`` says
``RECON_APT_CACHE``         the sandbox image's apt cache (``/var/cache/recon``)
``RECON_ENGINE_STATE``      the docker engine recon starts (``/var/lib/recon/engine``)
``RECON_<VENDOR>_BASE_URL`` where the live gateway reaches a vendor (:mod:`recon.gateway`)
``RECON_LIVE_CA``           an extra CA file the live gateway trusts
==========================  =========================================================

``DOCKER_HOST`` is docker's own variable: :func:`recon.sandbox.engine.engine_url` reads it
where a client is made, as docker's SDK does; :attr:`Settings.docker_host` keeps it only
as a key of the cached no-op plan.

Not settings, and read where they are: the variables of the sandbox and agent contract,
which the harness *sets* for a process it starts (``RECON_SCRIPTED_EOF``,
``RECON_PATCH_EOF``, an agent's forwarded ``env`` and credentials, ``PATH``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from recon.errors import ConfigError
from recon.gateway.settings import LiveSettings
from recon.store.layout import StoreLayout

EXECUTORS = ("local", "ray")
VIEWS = ("auto", "plain", "rich")
MAX_S = 7 * 86_400.0
PREFIX = "RECON_"


@dataclass(frozen=True)
class Settings:
    """What the environment set; ``None`` where it said nothing (the default applies)."""

    store: Path | None = None
    sealed: Path | None = None
    verify_reads: bool = True
    deps: Path | None = None
    browsers: int | None = None
    chromium: str | None = None
    executor: str | None = None
    ray_address: str | None = None
    ray_wait_s: float | None = None
    ray_give_up_s: float | None = None
    progress: str | None = None
    apt_cache: Path = Path("/var/cache/recon")
    engine_state: Path = Path("/var/lib/recon/engine")
    docker_host: str | None = None
    live: LiveSettings = field(default_factory=LiveSettings)
    forwarded: tuple[tuple[str, str], ...] = ()
    """Every ``RECON_*`` variable as found: what a Ray worker is given, and a key of the
    cached no-op plan (:mod:`recon.pipeline.noop`)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings ``environ`` (default: this process's environment) holds."""
        env = _Reader(os.environ if environ is None else environ)
        return cls(
            store=env.path("RECON_STORE"),
            sealed=env.path("RECON_SEALED", resolve=False),
            verify_reads=env.choice("RECON_VERIFY_ON_READ", ("1", "0")) != "0",
            deps=env.path("RECON_DEPS"),
            browsers=env.count("RECON_BROWSERS"),
            chromium=env.text("RECON_CHROMIUM"),
            executor=env.choice("RECON_EXECUTOR", EXECUTORS),
            ray_address=env.text("RECON_RAY_ADDRESS"),
            ray_wait_s=env.seconds("RECON_RAY_WAIT_S"),
            ray_give_up_s=env.seconds("RECON_RAY_GIVE_UP_S"),
            progress=env.choice("RECON_PROGRESS", VIEWS),
            apt_cache=env.path("RECON_APT_CACHE", resolve=False) or cls.apt_cache,
            engine_state=env.path("RECON_ENGINE_STATE", resolve=False) or cls.engine_state,
            docker_host=env.text("DOCKER_HOST"),
            live=LiveSettings.from_env(env.environ),
            forwarded=tuple(sorted((k, v) for k, v in env.environ.items() if k.startswith(PREFIX))),
        )

    def store_root(self, root: Path) -> Path:
        """The store of the project at ``root``: ``RECON_STORE``, else ``<root>/store``."""
        return (self.store or Path(root).resolve() / "store").resolve()

    def deps_root(self, store_root: Path) -> Path:
        """The offline dependency store: ``RECON_DEPS``, else ``<store>/deps``."""
        return self.deps or StoreLayout(Path(store_root)).deps.resolve()


@dataclass(frozen=True)
class _Reader:
    """Reads one variable at a time; an empty value is no value."""

    environ: Mapping[str, str]

    def text(self, name: str) -> str | None:
        return self.environ.get(name) or None

    def path(self, name: str, *, resolve: bool = True) -> Path | None:
        value = self.text(name)
        if value is None:
            return None
        return Path(value).resolve() if resolve else Path(value)

    def choice(self, name: str, allowed: tuple[str, ...]) -> str | None:
        value = self.text(name)
        if value is not None and value not in allowed:
            raise bad(name, value, f"choose from {', '.join(allowed)}")
        return value

    def count(self, name: str) -> int | None:
        value = self.text(name)
        if value is None:
            return None
        if not value.strip().isdigit() or int(value) < 1:
            raise bad(name, value, "set a whole number of at least 1, or unset it")
        return int(value)

    def seconds(self, name: str) -> float | None:
        value = self.text(name)
        return None if value is None else seconds(name, value, "; set one or unset it")


def seconds(name: str, text: str, fix: str) -> float:
    """``text`` as a number of seconds in (0, :data:`MAX_S`]; else one line naming
    ``name`` and ending with ``fix``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (0 < value <= MAX_S):
        raise ConfigError(f"{name}={text}: not a number of seconds between 0 and {MAX_S:g}{fix}")
    return value


def bad(name: str, value: str, fix: str) -> ConfigError:
    """The one line a bad setting gives: the variable, its value, the fix."""
    return ConfigError(f"{name}={value[:200]}: not a valid value; {fix}")
