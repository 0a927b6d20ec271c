"""The blind pair-collection page in Debian's chromium (issue 15).

`recon calibrate collect` writes the page for the built demo; chromium opens it from disk.
Keyboard choices (← → ↓ b) are recorded, u undoes the last one, judgements survive a
reload (localStorage), the export parses with the page-judgement model, and `recon
calibrate ingest` maps it back to capture digests through the sealed key. No attempt id,
entry name or capture digest is in the page's DOM, its script or its file names, and the
key is not inside the page folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from recon.calibrate.scores import load_manifest
from recon.model import Judgement, PageJudgement, PairKey, ReleaseDef, load_json, load_yaml
from recon.render.browser import LAUNCH_ARGS, chromium_path
from tests.conftest import Build, recon
from tests.site.browse import ARTIFACTS

pytestmark = [pytest.mark.slow, pytest.mark.browser]

FLAGS = LAUNCH_ARGS[:6]  # --no-sandbox ... --no-first-run: the host browser, plainly
KEYS = ["ArrowLeft", "ArrowRight", "ArrowDown", "b", "u", "b", "ArrowLeft"]
RECORDED = ["left", "right", "tie", "both-bad", "left"]


def secrets_of(project: Path, key_file: Path) -> list[str]:
    """Every attempt id, entry name and capture digest of the demo release."""
    manifest = load_manifest(project, "demo")
    release = load_yaml(ReleaseDef, project / "releases/demo.yaml")
    found = set(release.entries) | {c.name for c in manifest.cells if c.kind == "attempt"}
    found |= {ref.digest for c in manifest.cells for ref in c.outputs.values()}
    key = load_json(PairKey, key_file)
    found |= {d for p in key.pairs.values() for d in (p.left, p.right)}
    return sorted(found)


def test_collection_page_records_keys_undoes_and_exports(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = built_demo[0]
    out = tmp_path / "page"
    made = recon(
        project, "calibrate", "collect", "demo", "--pairs", "8", "--seed", "3", "--out", str(out)
    )
    assert made.returncode == 0, made.stderr
    site = out / "site"
    assert (out / "pairs.key.json").is_file() and not list(site.rglob("*.key.json"))
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), headless=True, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto((site / "index.html").as_uri())
        page.fill("#rater", "Ada Lovelace")
        page.press("#rater", "Enter")
        assert page.is_visible("#judge") and not page.is_visible("#who")
        for key in KEYS:
            page.keyboard.press(key)
        assert page.text_content("#progress") == str(len(RECORDED))
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "calibrate-collect.png"))
        page.reload()
        assert page.text_content("#progress") == str(len(RECORDED))  # kept in localStorage
        page.click("#export-button")
        exported = page.input_value("#export")
        dom = page.content()
        script = (site / "collect.js").read_text()
        browser.close()
    rows = [PageJudgement.model_validate_json(line) for line in exported.splitlines()]
    assert [r.choice for r in rows] == RECORDED
    assert [r.pair for r in rows] == [f"p{i:04d}" for i in range(1, len(RECORDED) + 1)]
    assert "Ada" not in exported and len({r.rater for r in rows}) == 1
    assert all(url.startswith("file://") for url in requests), requests
    names = "\n".join(str(p.relative_to(site)) for p in site.rglob("*"))
    for secret in secrets_of(project, out / "pairs.key.json"):
        for where, text in (("DOM", dom), ("script", script), ("file names", names)):
            assert secret not in text, f"{secret} is in the page's {where}"

    export = out / "export.jsonl"
    export.write_text(exported)
    ingested = recon(
        project,
        "calibrate",
        "ingest",
        str(export),
        "--key",
        str(out / "pairs.key.json"),
        "--out",
        str(out / "prefs.jsonl"),
    )
    assert ingested.returncode == 0, ingested.stderr
    key = load_json(PairKey, out / "pairs.key.json")
    joined = [
        Judgement.model_validate_json(x) for x in (out / "prefs.jsonl").read_text().splitlines()
    ]
    assert [j.choice for j in joined] == RECORDED
    for j in joined:
        assert (j.left, j.right, j.seed) == (
            key.pairs[j.pair].left,
            key.pairs[j.pair].right,
            key.pairs[j.pair].seed,
        )
    assert json.loads((out / "prefs.jsonl").read_text().splitlines()[0])["release"] == "demo"
