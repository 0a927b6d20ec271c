"""A release naming a calibration that is missing or malformed is bad input (exit 2)."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import copy_project, recon


def test_missing_and_malformed_calibration_are_one_line_errors(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    definition = project / "releases/demo.yaml"
    definition.write_text(definition.read_text() + "calibration: nope\n")
    missing = recon(project, "validate", "--no-render")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "releases/demo.yaml: calibration: no releases/calibrations/nope.yaml" in missing.stderr
    (project / "releases/calibrations").mkdir()
    (project / "releases/calibrations/nope.yaml").write_text(
        "schema_version: 1\nid: nope\nmethod: m\nweights: {global_visual: 0.5}\n"
    )
    malformed = recon(project, "validate", "--no-render")
    assert malformed.returncode == 2 and "Traceback" not in malformed.stderr
    assert "releases/calibrations/nope.yaml" in malformed.stderr
    assert "weights must sum to 1" in malformed.stderr or "report" in malformed.stderr
