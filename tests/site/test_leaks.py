"""The leak scan of the whole exported demo site (issue 14), and proof that it bites.

``tests/site/leaks.py`` says what counts as sealed: every 32-byte window of every sealed
file, every sealed selector, threshold and expected value, every weight (and weight ×
value product) written as a number, every oracle capture digest. The published demo site
(``releases/demo/site``, with the ``data/`` the export writes) holds none of them; a
template edited to print sealed fields is caught, one finding per kind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recon.model import Manifest
from tests.conftest import Build, clone_built, doit
from tests.site.leaks import describe, scan, sealed_material

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_the_exported_demo_site_holds_nothing_sealed(built_demo: tuple[Path, Build]) -> None:
    project = built_demo[0]
    sealed = sealed_material(project)
    counts = describe(sealed)
    print(f"\nscanned for {counts}")
    assert counts["windows"] > 20_000 and counts["strings"] >= 15 and counts["digests"] >= 40
    assert {"0.3500", "0.2500", "0.1500"} <= sealed.numbers.keys()  # the real weights
    assert 'ul[aria-label="todo list"]' in sealed.strings and "pin the evidence" in sealed.strings
    site = project / "releases" / "demo" / "site"
    assert (site / "data" / "manifest.js").is_file()  # the export's data is scanned too
    assert scan(site, sealed) == []


def _injection(project: Path) -> str:
    """Sealed material as a careless template edit would print it."""
    selector = 'ul[aria-label="Todo list"]'  # todomvc's heaviest region
    app = (project / "cases/todomvc/sealed/reference/js/app.js").read_text()
    start = next(
        i
        for i in range(len(app))
        if "{" not in app[i : i + 48]
        and "}" not in app[i : i + 48]
        and "<" not in app[i : i + 48]
        and len(set(app[i : i + 48])) > 12
    )
    code = app[start : start + 48]  # fmt: skip
    manifest = Manifest.model_validate_json((project / "releases/demo/manifest.json").read_text())
    oracle = next(c for c in manifest.cells if c.kind == "oracle").outputs["captures"].digest
    return (
        f"{{% raw %}}<p hidden>{selector} {code} weight 0.3500 oracle {oracle}</p>{{% endraw %}}\n"
    )


def test_the_scan_fails_when_a_sealed_field_is_injected_into_a_template(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = clone_built(built_demo[0], tmp_path / "p")
    template = project / "recon/site/templates/run.html"
    text = template.read_text()
    anchor = '<section id="outcome">'
    template.write_text(text.replace(anchor, _injection(project) + anchor))
    build = doit(project, "release:demo")
    assert "site:demo" in build.ran  # a template edit re-keys the site cell
    found = scan(project / "releases/demo/site", sealed_material(project))
    runs = json.loads((project / "releases/demo/release.json").read_text())["attempts"]
    pages = {f"runs/{a['id']}.html" for a in runs}
    assert {f.split(": ", 1)[0] for f in found} == pages
    kinds = {
        "selector": "'ul[aria-label=\"todo list\"]' (todomvc regions.list.selector)",
        "sealed file": "32 bytes of cases/todomvc/sealed/reference/js/app.js@",
        "weight": "number 0.3500 (html5-boilerplate weights.global_visual)",
        "oracle digest": "(oracle:",
    }
    for kind, needle in kinds.items():
        assert any(needle in f for f in found), f"{kind} not found: {found[:8]}"
