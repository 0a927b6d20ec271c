"""recon.render: the render boundary — candidate code runs only inside chromium.

``open_browser`` launches chromium with the pinned fonts in an empty network namespace;
``capture`` takes deterministic stills of one matrix point (route, viewport, state steps)
of a build, settled under page time and proven stable a frame apart; ``record_motion``
steps page time through a transition frame by frame; ``run_checks`` evaluates sealed
checks (assertions, workflows) from the playwright side. ``BrowserPool`` runs such jobs
on browsers it keeps healthy: a page that crashes or hangs chromium costs only its own job
(:class:`~recon.errors.PageError`).
"""

from recon.render.browser import CHROMIUM, LAUNCH_ARGS, browser_version, open_browser
from recon.render.capture import (
    ORIGIN,
    Capture,
    NetworkEvent,
    Reader,
    Stability,
    Viewport,
    capture,
)
from recon.render.motion import Motion, record_motion
from recon.render.pool import BrowserPool
from recon.render.probe import CheckResult, WorkflowRun, run_checks, run_workflow

__all__ = [
    "CHROMIUM",
    "LAUNCH_ARGS",
    "ORIGIN",
    "BrowserPool",
    "Capture",
    "CheckResult",
    "Motion",
    "NetworkEvent",
    "Reader",
    "Stability",
    "Viewport",
    "WorkflowRun",
    "browser_version",
    "capture",
    "open_browser",
    "record_motion",
    "run_checks",
    "run_workflow",
]
