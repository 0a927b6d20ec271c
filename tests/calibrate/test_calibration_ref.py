"""A release naming a calibration that is missing or malformed is bad input (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.errors import ReconError
from recon.model import Calibration, load_yaml
from tests.conftest import copy_project, naming, recon


def test_missing_and_malformed_calibration_are_one_line_errors(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "p")
    definition = project / "releases/demo.yaml"
    definition.write_text(naming(definition.read_text(), "nope"))
    missing = recon(project, "validate", "--no-render")
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "releases/demo.yaml: calibration: no releases/calibrations/nope.yaml" in missing.stderr
    (project / "releases/calibrations").mkdir(exist_ok=True)
    (project / "releases/calibrations/nope.yaml").write_text(
        "schema_version: 1\nid: nope\nmethod: m\nweights: {global_visual: 0.5}\n"
    )
    malformed = recon(project, "validate", "--no-render")
    assert malformed.returncode == 2 and "Traceback" not in malformed.stderr
    assert "releases/calibrations/nope.yaml" in malformed.stderr
    assert "weights.regional_visual: no weight" in malformed.stderr, malformed.stderr


VALID = """schema_version: 1
id: nope
method: m
weights:
  global_visual: 0.5
  regional_visual: 0
  functional: 0.5
  responsive: 0
  workflow: 0
  preservation: 0
  policy: 0
report:
  judgements: 0
  decisive: 0
  ties: 0
  both_bad: 0
  folds: 5
  l2: 0.001
  scale: 1.0
  dimensions: {}
  current: {agreement: 0.5, low: 0.0, high: 1.0, judgements: 0}
  fitted: {agreement: 0.5, low: 0.0, high: 1.0, judgements: 0}
"""


def test_a_bad_threshold_in_a_calibration_is_one_error_naming_file_field_and_fix(
    tmp_path: Path,
) -> None:
    project = copy_project(tmp_path / "p")
    definition = project / "releases/demo.yaml"
    definition.write_text(naming(definition.read_text(), "nope"))
    (project / "releases/calibrations").mkdir(exist_ok=True)
    path = project / "releases/calibrations/nope.yaml"
    path.write_text(VALID + "thresholds: {region_pass: 0.6, position_tolerance_px: 48}\n")
    assert recon(project, "validate", "--no-render").returncode == 0  # a good one loads
    for bad, message in (
        ("{region_pass: 1.5}", "thresholds.region_pass: out of range: must be at most 1"),
        ("{overflow_tolerance_px: -3}", "thresholds.overflow_tolerance_px: out of range"),
        ("{position_tolerance_px: 12.5}", "thresholds.position_tolerance_px: must be a whole"),
        ("{region_pas: 0.7}", "thresholds.region_pas: unknown key; remove it or check"),
    ):
        path.write_text(VALID + f"thresholds: {bad}\n")
        done = recon(project, "validate", "--no-render")
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert "releases/calibrations/nope.yaml: " + message in lines[0], lines[0]


def test_a_calibration_that_leaves_out_a_dimension_is_refused_naming_it(tmp_path: Path) -> None:
    """Applied, a calibration replaces a case's weights whole: a left-out dimension would
    drop out of every total, so its weight of 0 is written out, never assumed."""
    path = tmp_path / "nope.yaml"
    path.write_text(VALID.replace("  workflow: 0\n", ""))
    with pytest.raises(ReconError) as refused:
        load_yaml(Calibration, path)
    message = str(refused.value)
    assert "weights.workflow: no weight; write `workflow: 0`" in message, message
    assert len(message.splitlines()) == 1
    path.write_text(VALID)
    assert load_yaml(Calibration, path).weights["workflow"] == 0
