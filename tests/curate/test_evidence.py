"""`recon case evidence`: stills per viewport and state, motion per declared transition."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image

from recon.cli import main
from recon.curate import freeze_evidence, render_evidence
from recon.errors import ConfigError
from recon.model import Contract
from recon.render.browser import chromium_path
from recon.store import Store, digest_bytes, tree_files

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
    ),
]

REPO = Path(__file__).resolve().parents[2]

# A menu that slides in over 300 ms once "Menu" is clicked.
REFERENCE = """<!doctype html><meta charset="utf-8">
<style>
  body { margin: 0; font: 16px sans-serif }
  nav { position: absolute; top: 60px; left: 0; width: 200px; height: 300px;
        background: #36c; transform: translateX(-200px); transition: transform .3s linear }
  body.open nav { transform: none }
</style>
<button onclick="document.body.classList.add('open')">Menu</button>
<nav aria-label="site"><a href="/">Home</a></nav>"""

SLIDE = {
    "name": "menu-slide",
    "route": "/",
    "viewport": "mobile",
    "steps": [{"click": {"role": "button", "name": "Menu"}}],
    "frames": 4,
    "duration_ms": 300,
}


def contract(**changes: Any) -> Contract:
    data: dict[str, Any] = {
        "routes": ["/"],
        "viewports": ["mobile"],
        "states": [{"name": "menu-open", "route": "/", "steps": SLIDE["steps"]}],
        "motion": [SLIDE],
        "build": {"output": "site"},
    }
    return Contract.model_validate({**data, **changes})


def case(tmp_path: Path, name: str) -> tuple[Path, Path]:
    reference = tmp_path / name / "reference"
    reference.mkdir(parents=True)
    (reference / "index.html").write_text(REFERENCE)
    public = tmp_path / name / "public"
    for part in ("starter", "evidence"):
        (public / part).mkdir(parents=True)
    (public / "brief.md").write_text("Rebuild the page.\n")
    (public / "contract.yaml").write_text("schema_version: 1\n")
    return reference, public


def files(public: Path) -> dict[str, bytes]:
    evidence = public / "evidence"
    found = [p for p in evidence.rglob("*.*") if p.is_file()]
    return {p.relative_to(evidence).as_posix(): p.read_bytes() for p in found}


def test_stills_and_motion_are_rendered_and_identical_twice(tmp_path: Path) -> None:
    renders = []
    for name in ("first", "second"):
        reference, public = case(tmp_path, name)
        render_evidence(reference, public, contract())
        renders.append(files(public))
    first, second = renders
    assert sorted(first) == [
        "mobile--menu-open.png",
        "mobile.png",
        "motion/menu-slide.png",
        "motion/menu-slide.webp",
    ]
    assert first == second  # same bytes, file by file
    assert first["mobile.png"] != first["mobile--menu-open.png"]  # the state shows the menu

    strip = Image.open(io.BytesIO(first["motion/menu-slide.png"])).convert("RGB")
    assert strip.size == (4 * 390, 844)
    # The nav's left edge slides in: blue at x=10 only once the transition has moved it.
    blue = [strip.getpixel((i * 390 + 10, 200)) == (51, 102, 204) for i in range(4)]
    assert blue == [False, True, True, True]
    # Its right edge at 0, 67, 133 and 200 px: a third of the way more every 100 ms.
    moving = [strip.getpixel((i * 390 + 100, 200)) == (51, 102, 204) for i in range(4)]
    assert moving == [False, False, True, True]
    webp = Image.open(io.BytesIO(first["motion/menu-slide.webp"]))
    assert (webp.format, getattr(webp, "n_frames", 1), webp.size) == ("WEBP", 4, (390, 844))
    webp.convert("RGB")  # decoding a frame reads its duration
    assert webp.info["duration"] == 100


def test_the_evidence_bundle_carries_stills_and_motion(tmp_path: Path) -> None:
    reference, public = case(tmp_path, "case")
    written = render_evidence(reference, public, contract())
    store = Store(tmp_path / "store")
    bundle = tree_files(store, freeze_evidence(store, public))
    for path in written:
        rel = path.relative_to(public).as_posix()
        assert bundle[rel].digest == digest_bytes(path.read_bytes()), rel
    assert {"evidence/motion/menu-slide.webp", "evidence/mobile--menu-open.png"} <= set(bundle)


def test_states_and_transitions_the_contract_dropped_are_removed(tmp_path: Path) -> None:
    reference, public = case(tmp_path, "case")
    render_evidence(reference, public, contract())
    (public / "evidence" / "notes.txt").write_text("the curator's own file stays")
    render_evidence(reference, public, contract(states=[], motion=[]))
    assert sorted(files(public)) == ["mobile.png", "notes.txt"]


def test_every_route_gets_its_own_stills_and_dropped_routes_are_removed(tmp_path: Path) -> None:
    reference, public = case(tmp_path, "case")
    (reference / "about.html").write_text("<!doctype html><h1>About us</h1>")
    (reference / "blog").mkdir()
    (reference / "blog" / "index.html").write_text("<!doctype html><h1>Blog</h1>")
    routes = contract(routes=["/", "/about.html", "/blog/"], states=[], motion=[])
    render_evidence(reference, public, routes)
    found = files(public)
    assert sorted(found) == ["about.html/mobile.png", "blog/mobile.png", "mobile.png"]
    assert len({found["mobile.png"], found["about.html/mobile.png"], found["blog/mobile.png"]}) == 3
    render_evidence(reference, public, contract(states=[], motion=[]))
    assert sorted(files(public)) == ["mobile.png"]
    assert not (public / "evidence" / "blog").exists()


def test_a_route_the_reference_cannot_serve_is_the_contracts_problem(tmp_path: Path) -> None:
    reference, public = case(tmp_path, "case")
    with pytest.raises(ConfigError, match=r"routes \(/missing\.html\)"):
        render_evidence(reference, public, contract(routes=["/", "/missing.html"], motion=[]))


@pytest.mark.parametrize("field", ["states", "motion"])
def test_a_reference_that_cannot_reach_a_declared_point_is_a_contract_error(
    tmp_path: Path, field: str
) -> None:
    reference, public = case(tmp_path, "case")
    missing = [{"click": {"role": "button", "name": "Nope"}}]
    changes: dict[str, Any] = (
        {"states": [{"name": "menu-open", "route": "/", "steps": missing}]}
        if field == "states"
        else {"motion": [{**SLIDE, "steps": missing}]}
    )
    with pytest.raises(ConfigError) as err:
        render_evidence(reference, public, contract(**changes))
    message = str(err.value)
    assert "\n" not in message
    assert f"contract.yaml: {field}[0]" in message
    assert "steps[0] click {role: button, name: Nope}" in message
    assert "fix the contract or the reference" in message


def test_the_cli_renders_the_demo_case_as_committed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo case's committed stills are what the command renders today."""
    root = tmp_path / "project"
    shutil.copytree(REPO / "cases" / "html5-boilerplate", root / "cases" / "html5-boilerplate")
    contract_file = root / "cases" / "html5-boilerplate" / "public" / "contract.yaml"
    data = yaml.safe_load(contract_file.read_text())
    data["motion"] = [{"name": "load", "route": "/", "viewport": "mobile", "frames": 2,
                       "duration_ms": 100}]  # fmt: skip
    contract_file.write_text(yaml.safe_dump(data))
    assert main(["--root", str(root), "case", "evidence", "html5-boilerplate"]) == 0
    printed = capsys.readouterr().out.split()
    evidence = contract_file.parent / "evidence"
    assert [Path(p).relative_to(evidence).as_posix() for p in printed] == [
        "desktop.png",
        "mobile.png",
        "tablet.png",
        "motion/load.png",
        "motion/load.webp",
    ]
    committed = REPO / "cases" / "html5-boilerplate" / "public" / "evidence"
    for name in ("desktop.png", "mobile.png", "tablet.png"):
        assert (evidence / name).read_bytes() == (committed / name).read_bytes(), name


def test_a_reference_that_never_holds_still_is_refused(tmp_path: Path) -> None:
    """Evidence is never a frame caught mid-motion: an endlessly moving reference is refused."""
    reference, public = case(tmp_path, "case")
    (reference / "index.html").write_text(
        "<!doctype html><div id='b' style='position:absolute;width:40px;height:40px;"
        "background:#c30'></div><script>const b = document.getElementById('b');"
        "const f = (t) => { b.style.left = (t / 3) % 300 + 'px'; requestAnimationFrame(f) };"
        "requestAnimationFrame(f)</script>"
    )
    with pytest.raises(ConfigError) as err:
        render_evidence(reference, public, contract(states=[], motion=[]))
    message = str(err.value)
    assert "\n" not in message
    assert "contract.yaml: viewports: the sealed reference never holds still" in message
    assert "pixels differed between stills a frame apart" in message
    assert "prefers-reduced-motion" in message
    assert not (public / "evidence" / "mobile.png").exists()


@pytest.mark.usefixtures("unshare_refused")
def test_no_network_namespace_stops_the_command_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Where `unshare` is refused, nothing renders on an open network: one line, exit 1."""
    root = tmp_path / "project"
    shutil.copytree(REPO / "cases" / "html5-boilerplate", root / "cases" / "html5-boilerplate")
    before = files(root / "cases" / "html5-boilerplate" / "public")
    assert main(["--root", str(root), "case", "evidence", "html5-boilerplate"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("recon: chromium must run in an empty network")
    assert "Fix: run the harness as root" in err
    assert files(root / "cases" / "html5-boilerplate" / "public") == before


def test_a_state_is_rendered_only_at_the_viewports_it_names(tmp_path: Path) -> None:
    reference, public = case(tmp_path, "case")
    state = {"name": "menu-open", "route": "/", "steps": SLIDE["steps"], "viewports": ["mobile"]}
    scoped = contract(viewports=["mobile", "tablet"], states=[state], motion=[])
    render_evidence(reference, public, scoped)
    assert sorted(files(public)) == ["mobile--menu-open.png", "mobile.png", "tablet.png"]
