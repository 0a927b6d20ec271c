"""``make engine`` and ``make image``: the two entry points that set up this machine's
sandbox. Each reads the settings once (:class:`~recon.project.settings.Settings`) and
passes them in; the modules they call read no environment (so the image cell's code is
not keyed on the settings module)."""

from __future__ import annotations

from pathlib import Path

from docker.errors import DockerException

from recon.errors import HarnessError
from recon.project.settings import Settings
from recon.sandbox.engine import ensure_engine
from recon.sandbox.rootfs import ensure_image

CHECKOUT = Path(__file__).resolve().parents[2]
"""The project this recon is checked out in: ``make`` runs from it."""


def engine_main() -> int:
    """`make engine`: make sure an engine answers, starting dockerd if we may."""
    try:
        start = ensure_engine(state_dir=Settings.from_env().engine_state)
    except HarnessError as err:
        print(f"recon engine: {err}")
        return 1
    if start.started:
        print(
            f"recon engine: started dockerd (pid {start.pid}) in {start.took_s}s; log {start.log}"
        )
    else:
        print(f"recon engine: docker engine answers at {start.url}")
    return 0


def image_main() -> int:
    """`make image`: the sandbox image of this machine, built when the engine lacks it (a tag
    lookup when it has it). `make test` runs it in the background while the tests that need
    no engine run, so the minutes of a cold build overlap them."""
    settings = Settings.from_env()
    deps = settings.deps_root(settings.store_root(CHECKOUT))
    try:
        built = ensure_image(deps_root=deps, cache_dir=settings.apt_cache)
    except (HarnessError, DockerException) as err:
        print(f"recon image: {err}")
        return 1
    if built.cached:
        print(f"recon image: {built.tag} is in the engine ({built.image_id[:19]})")
    else:
        parts = ", ".join(f"{k} {v:.1f}s" for k, v in built.timings.items())
        print(f"recon image: built {built.tag} in {built.took_s:.1f}s ({parts})")
    return 0
