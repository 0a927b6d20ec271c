"""Every matrix point of every demo case renders to identical PNGs in two separate processes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from recon.render.browser import chromium_path
from tests.conftest import suite_cases

REPO = Path(__file__).resolve().parents[2]
CASES = [REPO / "cases" / case for case in suite_cases()]  # RECON_FULL_SUITE=1: all

# Run in a fresh interpreter: its own playwright driver, its own chromium.
RENDER_MATRIX = """
import json, sys
from pathlib import Path
from recon.model import Contract, load_yaml
from recon.model.matrix import points
from recon.render import Viewport, open_browser
from recon.render.capture import capture

case, out = Path(sys.argv[1]), Path(sys.argv[2])  # out: made by the in_a_new_process fixture
reference = case / "sealed" / "reference"

def read(rel):
    path = reference / rel
    return path.read_bytes() if path.is_file() else None

failures = {}
with open_browser() as browser:
    for point in points(load_yaml(Contract, case / "public" / "contract.yaml")):
        vp = point.viewport
        shot = capture(browser, read, point.route, Viewport(vp.name, vp.width, vp.height),
                       steps=point.steps)
        (out / f"{point.id}.full.png").write_bytes(shot.full_png)
        (out / f"{point.id}.viewport.png").write_bytes(shot.viewport_png)
        (out / f"{point.id}.dom.json").write_text(json.dumps(shot.dom, sort_keys=True))
        failures[point.id] = shot.failure
(out / "failures.json").write_text(json.dumps(failures))
"""


@pytest.mark.browser
@pytest.mark.skipif(
    not os.access(chromium_path(), os.X_OK), reason=f"no chromium at {chromium_path()}"
)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_matrix_point_is_bit_identical_across_processes(
    case: Path, tmp_path: Path, in_a_new_process: Callable[..., dict[str, bytes]]
) -> None:
    first = in_a_new_process(RENDER_MATRIX, tmp_path / "first", str(case))
    second = in_a_new_process(RENDER_MATRIX, tmp_path / "second", str(case))
    assert first.keys() == second.keys()
    pngs = [name for name in first if name.endswith(".png")]
    assert len(pngs) >= 2 * 3, "every point gives a full-page and a viewport PNG"
    assert all(first[name].startswith(b"\x89PNG") for name in pngs)
    differing = [name for name in first if first[name] != second[name]]
    assert differing == []
    failures = json.loads(first["failures.json"])
    assert failures == {name.removesuffix(".full.png"): None for name in first if "full" in name}
