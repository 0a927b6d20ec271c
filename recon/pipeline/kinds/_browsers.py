"""The browsers the render kinds share (oracle, capture, probe): one pool per run."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from recon.render import BrowserPool

if TYPE_CHECKING:
    from recon.pipeline.runtime import Runtime


def browser_pool(rt: Runtime) -> BrowserPool:
    """The run's browsers: ``RECON_BROWSERS`` of ``RECON_CHROMIUM`` (the project's settings)."""
    settings = rt.project.settings
    make = partial(BrowserPool, settings.browsers, chromium=settings.chromium)
    return rt.shared(BrowserPool, make)
