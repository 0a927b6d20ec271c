"""recon.render: the render boundary — candidate code runs only inside chromium.

``open_browser`` launches chromium; ``capture`` takes deterministic stills of one route
of a build; ``run_checks`` evaluates sealed functional checks from the playwright side.
"""

from recon.render.browser import CHROMIUM, LAUNCH_ARGS, browser_version, open_browser
from recon.render.capture import ORIGIN, Capture, NetworkEvent, Reader, Viewport, capture
from recon.render.pool import BrowserPool
from recon.render.probe import Check, CheckResult, run_checks

__all__ = [
    "CHROMIUM",
    "LAUNCH_ARGS",
    "ORIGIN",
    "BrowserPool",
    "Capture",
    "Check",
    "CheckResult",
    "NetworkEvent",
    "Reader",
    "Viewport",
    "browser_version",
    "capture",
    "open_browser",
    "run_checks",
]
