"""Launching Debian's chromium through playwright, and naming its version.

The executable is ``/usr/bin/chromium`` unless ``RECON_CHROMIUM`` names another.
"""

from __future__ import annotations

import functools
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from playwright.sync_api import Browser, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from recon.errors import HarnessError

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # Determinism: same glyph rasterisation and colours on every host.
    "--font-render-hinting=none",
    "--disable-lcd-text",
    "--force-color-profile=srgb",
    "--hide-scrollbars",
]


def chromium_path() -> str:
    """The chromium executable: ``$RECON_CHROMIUM`` or :data:`CHROMIUM`."""
    return os.environ.get("RECON_CHROMIUM") or CHROMIUM


def _require(path: str) -> str:
    if not os.access(path, os.X_OK):
        raise HarnessError(
            f"chromium not found at {path}: run `make demo` or `apt-get install chromium`"
        )
    return path


@contextmanager
def open_browser() -> Iterator[Browser]:
    """A headless chromium, closed (with its playwright driver) on exit."""
    path = _require(chromium_path())
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=path, headless=True, args=LAUNCH_ARGS)
        except PlaywrightError as exc:
            raise HarnessError(f"chromium at {path} failed to launch: {exc.message}") from exc
        try:
            yield browser
        finally:
            browser.close()


def browser_version() -> str:
    """The chromium version line (a cache-key input); runs ``--version``, no launch."""
    return _version(_require(chromium_path()))


@functools.lru_cache(maxsize=8)
def _version(path: str) -> str:
    proc = subprocess.run(
        [path, "--version"], capture_output=True, text=True, timeout=30, check=False
    )
    line = proc.stdout.strip()
    if proc.returncode != 0 or not line:
        raise HarnessError(f"`{path} --version` failed (exit {proc.returncode}): {proc.stderr}")
    return line
