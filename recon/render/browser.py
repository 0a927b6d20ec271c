"""Launching Debian's chromium through playwright, and naming its version.

The executable is ``/usr/bin/chromium`` unless ``RECON_CHROMIUM`` names another. It runs
in an empty network namespace (:mod:`recon.render.netns`): page script reaches nothing,
whatever the API; the build is served by request interception.

Automation tells: ``navigator.webdriver`` is ``false`` (``AutomationControlled`` is
disabled) and the user agent says ``Chrome``, not ``HeadlessChrome`` (set per context in
:mod:`recon.render.page`). Real pages check these two (analytics, consent banners, bot
walls) and show a harness something other than a person's browser, which would make a
reference's evidence unfaithful. Not hidden: the fake clock and the seeded random
functions (``Date.now.toString()`` shows their source); they are what makes renders
repeatable, and a page that detects them gains nothing, since every capture, probe and
evidence still of every build, reference and Candidate alike, is taken by this harness.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import blake3
from playwright.sync_api import Browser, sync_playwright
from playwright.sync_api import Error as PlaywrightError

from recon.errors import HarnessError
from recon.render.netns import launched_pid, unshare_prefix, write_launcher

CHROMIUM = "/usr/bin/chromium"
JS_HEAP_MB = 1024
TOOL_FACTS = ("chromium",)
"""Render cells' keys hold the chromium version (recon.pipeline.codegraph)."""
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
    # Every tile rasterised whole: with partial raster chromium repaints only a tile's
    # invalidated part over what it drew before, so a page's pixels depended on the frames
    # it passed through (bootstrap-widgets' support dialog: 9-22 antialiased pixels one to
    # five levels apart run to run, about one capture in six; 0 in 12 without it).
    "--disable-partial-raster",
    # No `navigator.webdriver`: a page can't tell the harness from a person's browser by it.
    "--disable-blink-features=AutomationControlled",
    # A page's JavaScript heap is bounded: one that keeps growing crashes its own renderer
    # (recorded as the page's failure by recon.render.pool) long before the machine's
    # memory runs out. The launcher's RLIMIT_DATA bounds the rest (recon.render.netns).
    f"--js-flags=--max-old-space-size={JS_HEAP_MB}",
    # Every frame renders in the page's own process: a sandboxed <iframe> in a process of
    # its own reached the page's compositor late (a real page's sandboxed srcdoc video was
    # painted in some captures and not yet in others: 5 versions in 10 captures, 2 with
    # this flag, which differ in one row). Every page is served from one origin, so site
    # isolation separates nothing here. Not `--disable-features=IsolateSandboxedIframes`:
    # chromium keeps only the last --disable-features, and playwright passes its own.
    "--disable-site-isolation-trials",
]


CLOSE_LIMIT_S = 30.0  # a browser that does not close this long after asked is killed


def chromium_path(chromium: str | None = None) -> str:
    """The chromium executable: ``chromium`` (``RECON_CHROMIUM``) or :data:`CHROMIUM`."""
    return chromium or CHROMIUM


def _require(path: str) -> str:
    if not os.access(path, os.X_OK):
        raise HarnessError(
            f"chromium not found at {path}: run `make demo` or `apt-get install chromium`"
        )
    return path


@dataclass(frozen=True)
class Chromium:
    """A launched browser and its process (the browser process's pid)."""

    browser: Browser
    pid: int

    def kill(self) -> None:
        """SIGKILL the browser process (its renderers exit with it); safe from any thread."""
        with suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)


@contextmanager
def open_browser(executable: str | None = None) -> Iterator[Browser]:
    """A headless chromium (``executable``, else :data:`CHROMIUM`) in an empty network
    namespace, seeing only the pinned fonts, closed on exit."""
    with launch(executable) as chromium:
        yield chromium.browser


@contextmanager
def launch(executable: str | None = None) -> Iterator[Chromium]:
    """:func:`open_browser`, with the browser's process (to kill it when it hangs)."""
    path = _require(chromium_path(executable))
    unshare_prefix()  # refused before anything starts where no namespace is permitted
    with tempfile.TemporaryDirectory(prefix="recon-chromium-") as tmp, sync_playwright() as pw:
        launcher = write_launcher(Path(tmp), path)
        env: dict[str, str | float | bool] = {**os.environ}
        env["FONTCONFIG_FILE"] = str(write_fontconfig(Path(tmp)))
        try:
            browser = pw.chromium.launch(
                executable_path=str(launcher), headless=True, args=LAUNCH_ARGS, env=env
            )
        except PlaywrightError as exc:
            raise HarnessError(f"chromium at {path} failed to launch: {exc.message}") from exc
        chromium = Chromium(browser, launched_pid(Path(tmp)))
        try:
            yield chromium
        finally:
            _close(chromium)


def _close(chromium: Chromium) -> None:
    """Close the browser; one that hangs is killed instead (never blocks). One that is
    gone already (its pipe closed: it exited) is left alone."""
    if not chromium.browser.is_connected():
        return
    try:
        with watchdog(CLOSE_LIMIT_S, chromium.kill):
            chromium.browser.close()
    except PlaywrightError:
        chromium.kill()


@contextmanager
def watchdog(seconds: float, action: Callable[[], None]) -> Iterator[None]:
    """Run ``action`` (on a daemon thread) if the block is still running ``seconds`` in."""
    timer = threading.Timer(seconds, action)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


# --- pinned fonts -------------------------------------------------------------------------

FONT_DIR = Path(__file__).resolve().parent / "fonts"
# file -> blake3. Digests live in this module so a font change re-keys every render cell.
FONTS = {
    "LiberationSans-Regular.ttf": "e26ea68e21569bdb7a770a1b296d2414"
    "cb127309b260255dcbe00bdb8ad87505",
    "LiberationSerif-Regular.ttf": "11bfdd95e7624cde6e141989d0b96763"
    "ad09c6f976c111ef0237a646dca2cd3f",
    "LiberationMono-Regular.ttf": "30a9f8a470f1c2b2a54ccc804da95156"
    "64f07a4436a2168f8d581df78a06fd65",
    # the CJK fallback: Chinese, Japanese and Korean text renders as glyphs, never as boxes
    "DroidSansFallback.ttf": "92f21849da5d451e732266fb9cad987af3c7e61ce5810601196c05530973e072",
}
SANS, SERIF, MONO = "Liberation Sans", "Liberation Serif", "Liberation Mono"
CJK = "Droid Sans Fallback"  # no generic family maps to it: it only fills missing glyphs
# Generic families -> the pinned family that stands in for them; and the families each
# pinned one is metric-compatible with, as Debian's own fontconfig aliases them. Other
# names are unknown, so a font stack falls through to its generic family as it should.
ALIASES = {
    SANS: ("sans-serif", "sans", "system-ui", "ui-sans-serif", "cursive", "fantasy", "emoji"),
    SERIF: ("serif", "ui-serif"),
    MONO: ("monospace", "mono", "ui-monospace"),
}
METRIC_TWINS = {
    SANS: ("Arial", "Helvetica"),
    SERIF: ("Times New Roman", "Times"),
    MONO: ("Courier New", "Courier"),
}


def verify_fonts(font_dir: Path = FONT_DIR) -> None:
    """Refuse to render with fonts other than the pinned ones."""
    for name, digest in FONTS.items():
        path = font_dir / name
        if not path.is_file():
            raise HarnessError(f"{path}: pinned font missing; restore it from git")
        if blake3.blake3(path.read_bytes()).hexdigest() != digest:
            raise HarnessError(f"{path}: pinned font changed; restore it or update FONTS")


def write_fontconfig(folder: Path) -> Path:
    """A fontconfig file naming only the pinned fonts, with fixed rasterisation settings."""
    verify_fonts()
    aliases = "".join(
        f'  <alias binding="same"><family>{name}</family><prefer><family>{family}</family>'
        "</prefer></alias>\n"
        for table in (ALIASES, METRIC_TWINS)
        for family, names in table.items()
        for name in names
    )
    conf = folder / "fonts.conf"
    paths = {"fonts": escape(str(FONT_DIR)), "cache": escape(str(folder))}
    conf.write_text(_FONTCONFIG.format(**paths, aliases=aliases, sans=SANS))
    return conf


_FONTCONFIG = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>{fonts}</dir>
  <cachedir>{cache}</cachedir>
  <match target="font">
    <edit name="antialias" mode="assign"><bool>true</bool></edit>
    <edit name="hinting" mode="assign"><bool>false</bool></edit>
    <edit name="hintstyle" mode="assign"><const>hintnone</const></edit>
    <edit name="autohint" mode="assign"><bool>false</bool></edit>
    <edit name="rgba" mode="assign"><const>none</const></edit>
    <edit name="lcdfilter" mode="assign"><const>lcdnone</const></edit>
    <edit name="embeddedbitmap" mode="assign"><bool>false</bool></edit>
  </match>
{aliases}  <match target="pattern">
    <edit name="family" mode="append_last"><string>{sans}</string></edit>
  </match>
</fontconfig>
"""


def browser_version(executable: str | None = None) -> str:
    """The chromium version line (a cache-key input); runs ``--version``, no launch."""
    return _version(_require(chromium_path(executable)))


@functools.lru_cache(maxsize=8)
def _version(path: str) -> str:
    proc = subprocess.run(
        [path, "--version"], capture_output=True, text=True, timeout=30, check=False
    )
    line = proc.stdout.strip()
    if proc.returncode != 0 or not line:
        raise HarnessError(f"`{path} --version` failed (exit {proc.returncode}): {proc.stderr}")
    return line
