"""The demo site in a real browser (issue 14): page health, layout, screenshots.

Every page of the published demo site (``releases/demo/site``, as the export wrote it, with
its ``data/``) is opened from disk and served on 127.0.0.1: zero console errors, zero
requests outside the site folder, every link resolving to a file of it, every page reached
by a link. At 360, 390, 768 and 1440 px wide no page scrolls sideways. Screenshots of the
leaderboard, an entry page and a run page at desktop and mobile widths are saved under
``test-artifacts/site/`` (``RECON_TEST_ARTIFACTS`` to put them elsewhere).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Page

from recon.render import open_browser
from tests.conftest import Build
from tests.site.browse import ARTIFACTS, host_chromium, local_path, overflow, served, visit

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WIDTHS = (360, 390, 768, 1440)
SHOTS = {
    "leaderboard": "index.html",
    "entry": "entries/scripted-starter.html",
    "run": "runs/demo-native.scripted-starter.todomvc.0.html",
}


@pytest.fixture(scope="module")
def site(built_demo: tuple[Path, Build]) -> Path:
    return built_demo[0] / "releases" / "demo" / "site"


def pages(site: Path) -> list[str]:
    return sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))


def _crawl(page: Page, root: str, site: Path) -> set[str]:
    """Load every page; check its health; return the pages its links reach."""
    reached = set()
    problems = []
    for rel in pages(site):
        seen = visit(page, root + rel)
        problems += [f"{rel}: console: {e}" for e in seen.errors]
        for url in seen.requests:
            found = local_path(url, root, site)
            if found is None or not found.is_file():
                problems.append(f"{rel}: request outside the site or missing: {url}")
        for url in seen.links:
            found = local_path(url.split("#")[0], root, site)
            if found is None or not found.is_file():
                problems.append(f"{rel}: link does not resolve inside the site: {url}")
            elif found.suffix == ".html":
                reached.add(found.relative_to(site.resolve()).as_posix())
    assert problems == []
    return reached


def test_every_page_loads_clean_from_disk(site: Path) -> None:
    assert len(pages(site)) == 20  # index, reliability, manifest, 3 entries, 2 cases, 12 runs
    with open_browser() as browser:
        page = browser.new_page(viewport={"width": 1440, "height": 900})
        reached = _crawl(page, site.as_uri() + "/", site)
        assert reached == set(pages(site))  # every page is linked from another
        # the view-time data and the filter work from disk
        page.goto((site / SHOTS["run"]).as_uri())
        wall = page.locator('[data-field="wall_s"]').inner_text()
        assert wall.endswith(" s") and float(wall.removesuffix(" s")) >= 0
        assert len(page.locator('[data-field="logs"] code').inner_text()) == 64
        page.goto((site / "manifest.html").as_uri())
        assert page.locator("#manifest details").count() >= 9  # one per cell kind
        assert page.locator("#manifest-missing").count() == 0
        page.goto((site / "index.html").as_uri())
        page.select_option("#filter-agent", "recon-scripted")
        assert page.locator("#filter-count").inner_text() == "3 of 3 entries shown"
        page.select_option("#filter-condition", "full")
        page.select_option("#filter-agent", "")
        assert page.locator("table.leaderboard tbody tr[data-agent]:visible").count() == 3


def test_every_page_loads_clean_when_served(site: Path) -> None:
    with served(site) as root, host_chromium() as browser:
        page = browser.new_page(viewport={"width": 390, "height": 844})
        assert _crawl(page, root, site) == set(pages(site))


def test_no_page_scrolls_sideways_and_the_screenshots_are_saved(site: Path) -> None:
    out = ARTIFACTS / "site"
    out.mkdir(parents=True, exist_ok=True)
    wide = []
    with open_browser() as browser:
        for width in WIDTHS:
            page = browser.new_page(viewport={"width": width, "height": 900})
            for rel in pages(site):
                page.goto((site / rel).as_uri(), wait_until="load")
                if overflow(page) > 0:
                    wide.append(f"{rel} at {width} px: {overflow(page)} px too wide")
            for name, rel in SHOTS.items():
                if width in (390, 1440):
                    page.goto((site / rel).as_uri(), wait_until="load")
                    page.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
            page.close()
    assert wide == []
    for name in SHOTS:
        for width in (390, 1440):
            with Image.open(out / f"{name}-{width}.png") as shot:
                assert shot.width == width and shot.height >= 600
    print(f"\nscreenshots: {out}")
