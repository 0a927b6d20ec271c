"""An unstable capture is recorded, and never graded from an arbitrary frame (issue 11)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.grade.stored import read_views
from recon.model import Viewport
from recon.model.captures import PointCapture, PointFiles
from recon.model.matrix import Point
from recon.pipeline.kinds.render import capture_set
from recon.pipeline.runtime import Runtime
from recon.project.loader import Project
from recon.store import put_files

pytestmark = pytest.mark.browser

FOREVER = b"""<!doctype html><html><body style="margin:0">
<div id="box" style="width:40px;height:40px;background:#c00;position:relative"></div>
<script>
let x = 0;
function step() { x = (x + 3) % 300; box.style.left = x + 'px'; requestAnimationFrame(step); }
requestAnimationFrame(step);
</script></body></html>"""
STILL = b"<!doctype html><html><body><h1>Still</h1></body></html>"


def test_a_page_that_never_holds_still_is_an_unstable_failed_point(tmp_path: Path) -> None:
    rt = Runtime(Project(root=tmp_path, store_root=tmp_path / "store"))
    point = Point("/", Viewport(name="mobile", width=390, height=844))
    try:
        for page, status in ((FOREVER, "unstable"), (STILL, "stable")):
            build = put_files(rt.store, {"index.html": page})
            files, _ = capture_set(rt, build, [point])
            record = PointCapture.model_validate_json(
                files[PointFiles.path(point.id, PointFiles.RECORD)]
            )
            assert record.stability.status == status
            tree = put_files(rt.store, files)
            view = read_views(rt.store, tree, [point])[point.id]
            if status == "unstable":
                assert record.stability.differing_pixels > 0
                assert record.failure is not None and "unstable" in record.failure
                assert view.image is None and view.failure == record.failure
            else:
                assert record.failure is None and view.image is not None
    finally:
        rt.close()
