"""recon.render: the render boundary — candidate code runs only inside chromium.

``open_browser`` launches chromium with the pinned fonts in an empty network namespace;
:func:`recon.render.capture.capture` takes deterministic stills of one matrix point (route,
viewport, state steps) of a build, settled under page time and proven stable a frame apart
(a function named as its module: import it from the module); ``record_motion``
steps page time through a transition frame by frame; ``run_checks`` evaluates sealed
checks (assertions, workflows) from the playwright side. ``BrowserPool`` runs such jobs
on browsers it keeps healthy: a page that crashes or hangs chromium costs only its own job
(:class:`~recon.errors.PageError`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recon._lazy import exports

if TYPE_CHECKING:  # the same names, for type checkers: they do not run __getattr__
    from recon.render.browser import CHROMIUM as CHROMIUM
    from recon.render.browser import LAUNCH_ARGS as LAUNCH_ARGS
    from recon.render.browser import browser_version as browser_version
    from recon.render.browser import open_browser as open_browser
    from recon.render.capture import ORIGIN as ORIGIN
    from recon.render.capture import Capture as Capture
    from recon.render.capture import NetworkEvent as NetworkEvent
    from recon.render.capture import Reader as Reader
    from recon.render.capture import Stability as Stability
    from recon.render.capture import Viewport as Viewport
    from recon.render.motion import Motion as Motion
    from recon.render.motion import record_motion as record_motion
    from recon.render.pool import BrowserPool as BrowserPool
    from recon.render.probe import CheckResult as CheckResult
    from recon.render.probe import WorkflowRun as WorkflowRun
    from recon.render.probe import run_checks as run_checks
    from recon.render.probe import run_workflow as run_workflow

_EXPORTS = {
    "CHROMIUM": "recon.render.browser",
    "LAUNCH_ARGS": "recon.render.browser",
    "browser_version": "recon.render.browser",
    "open_browser": "recon.render.browser",
    "Capture": "recon.render.capture",
    "NetworkEvent": "recon.render.capture",
    "ORIGIN": "recon.render.capture",
    "Reader": "recon.render.capture",
    "Stability": "recon.render.capture",
    "Viewport": "recon.render.capture",
    "Motion": "recon.render.motion",
    "record_motion": "recon.render.motion",
    "BrowserPool": "recon.render.pool",
    "CheckResult": "recon.render.probe",
    "WorkflowRun": "recon.render.probe",
    "run_checks": "recon.render.probe",
    "run_workflow": "recon.render.probe",
}

__all__ = sorted(_EXPORTS)


__getattr__ = exports(__name__, _EXPORTS)
