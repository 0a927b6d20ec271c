"""A release that names a calibration (issue 15): real doit builds in a temporary folder.

Preference rows over the demo's real captures are fitted by `recon calibrate fit` into
``releases/calibrations/<id>.yaml`` (weights and thresholds); the demo release then names
it. Only grade cells and what is downstream of them run again, the manifest records the
calibration's digest, `recon diff` names ``calibration`` as the cause of every score it
moved, and no fitted weight reaches the release JSON or the site. A changed threshold in
the calibration again re-runs only grade and downstream, and no threshold reaches them.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
import yaml

from recon.calibrate.pairs import candidates
from recon.calibrate.scores import load_manifest, shots
from recon.model import Calibration, Judgement, load_yaml
from recon.model.calibration import FittedThresholds
from recon.model.grading import THRESHOLDS, Thresholds
from recon.store import Store, digest_bytes
from tests.conftest import Build, clone_built, doit, naming, recon

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def preference_rows(project: Path, count: int = 60) -> str:
    """A rater who prefers the capture with the higher global visual score at its point
    (a tie when equal), over the demo's real captures."""
    found = shots(Store(project / "store"), load_manifest(project, "demo"))
    pairs = candidates(found)
    rng = random.Random(5)
    lines = []
    for n in range(count):
        a, b = pairs[n % len(pairs)]
        left, right = (a, b) if rng.random() < 0.5 else (b, a)
        gap = left.dimensions["global_visual"] - right.dimensions["global_visual"]
        choice = "tie" if abs(gap) < 1e-9 else "left" if gap > 0 else "right"
        row = Judgement(
            release="demo",
            case=a.case,
            point=a.point,
            left=left.digest,
            right=right.digest,
            choice=choice,
            rater="r0123456789abcdef",
            time=f"2026-12-01T10:00:{n:02d}Z",
            seed=n,
        )
        lines.append(json.dumps(row.model_dump(mode="json", exclude_none=True)))
    return "\n".join(lines) + "\n"


def test_calibration_regrades_only_and_diff_names_it(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = clone_built(built_demo[0], tmp_path / "p")
    prefs = tmp_path / "prefs.jsonl"
    prefs.write_text(preference_rows(project))
    definition = project / "releases/demo.yaml"  # named: its visual part is carried over
    definition.write_text(naming(definition.read_text(), "real-reconstructions"))
    fitted = recon(project, "calibrate", "fit", str(prefs), "--release", "demo", "--id", "cal-a")
    assert fitted.returncode == 0, fitted.stderr
    assert (
        "fitted (held out)" in fitted.stdout and "releases/calibrations/cal-a.yaml" in fitted.stdout
    )
    path = project / "releases/calibrations/cal-a.yaml"
    calibration = load_yaml(Calibration, path)
    r = calibration.report
    assert r is not None and calibration.weights is not None
    assert r.judgements == 60 and calibration.release == "demo"
    assert set(r.thresholds) == set(THRESHOLDS)
    assert r.sweeps == 2 and r.rescorings > 0
    assert f"2 coordinate sweeps, {r.rescorings} re-grading(s)" in fitted.stdout
    # the visual fit of the calibration the demo names is carried over, not dropped
    named = load_yaml(Calibration, project / "releases/calibrations/real-reconstructions.yaml")
    assert calibration.visual == named.visual and "global visual on 89" in fitted.stdout
    for name, default in Thresholds().model_dump().items():
        assert f"\n{name}: current {default:g}; chosen own\n" in fitted.stdout
    grid = "  value          own        0        8       16       24       48       96      192\n"
    assert grid in fitted.stdout  # position_tolerance_px: each case's own, then its grid
    weights_only = recon(
        project, "calibrate", "fit", str(prefs), "--id", "cal-w", "--no-thresholds"
    )
    assert weights_only.returncode == 0 and "thresholds: not fitted" in weights_only.stdout
    # The demo's two answers (faithful, starter) barely move with any grid value (the
    # largest move, position_tolerance_px 192, is 0.0024 of a starter's regional score):
    # each case's own thresholds are kept, so the weights are the weights-only ones.
    assert calibration.thresholds == FittedThresholds()
    plain = load_yaml(Calibration, project / "releases/calibrations/cal-w.yaml")
    assert plain.report is not None
    assert plain.weights == calibration.weights and not plain.report.thresholds
    written = yaml.safe_load((project / "releases/calibrations/cal-w.yaml").read_text())
    assert written["thresholds"] == {} and written["report"].get("thresholds", {}) == {}

    definition.write_text(naming(definition.read_text(), "cal-a"))
    regraded_only(doit(project, "release:demo"))

    manifest = json.loads((project / "releases/demo/manifest.json").read_text())
    assert manifest["inputs"]["calibration"] == digest_bytes(path.read_bytes())
    old = json.loads((built_demo[0] / "releases/demo/manifest.json").read_text())
    assert old["inputs"]["calibration"] != manifest["inputs"]["calibration"]
    grades = [c["name"] for c in manifest["cells"] if c["kind"] == "grade"]
    assert grades and all(name.endswith("~cal-a") for name in grades)

    diff = recon(
        project,
        "diff",
        str(built_demo[0] / "releases/demo/manifest.json"),
        str(project / "releases/demo/manifest.json"),
    )
    assert diff.returncode == 1, diff.stderr
    report = json.loads(
        recon(
            project,
            "diff",
            "--json",
            str(built_demo[0] / "releases/demo/manifest.json"),
            str(project / "releases/demo/manifest.json"),
        ).stdout
    )
    assert "calibration" in {c["path"] for c in report["inputs"]}
    assert report["chains"], "the calibration moved no score"
    for chain in report["chains"]:
        assert "calibration" in [c["path"] for c in chain["causes"]], chain
    assert "calibration" in diff.stdout

    texts = published(project)
    shown_weights = [f"{w:.6f}".rstrip("0") for w in calibration.weights.values()]
    for weight in [w for w in shown_weights if len(w) >= 6]:  # 4+ decimals: not a round score
        assert weight not in texts, weight

    # Thresholds no grid holds, so that a leak of any of them is recognisable.
    data = yaml.safe_load(path.read_text())
    data["thresholds"] = SEALED_THRESHOLDS
    # and a global visual fit that weighs layout alone: every point's row is scored with it
    for terms in (data["visual"]["weights"]["content"], data["visual"]["weights"]["image"]):
        terms.update({t: float(t == "layout") for t in terms})
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    regraded_only(doit(project, "release:demo"))
    after = json.loads((project / "releases/demo/manifest.json").read_text())
    store = Store(project / "store")
    scored = 0
    for cell in (c for c in after["cells"] if c["kind"] == "grade"):
        table = store.read_json(cell["outputs"]["grade"]["digest"])
        rows = table.get("details", {}).get("global_visual", [])  # a crash has none
        for row in (r for r in rows if "terms" in r):  # a failed capture: none
            assert row["terms"]["w_layout"] == 1.0 and row["terms"]["w_palette"] == 0.0, row
            scored += 1
    assert scored > 0
    assert after["inputs"]["calibration"] == digest_bytes(path.read_bytes())
    assert after["inputs"]["cases"] == manifest["inputs"]["cases"]  # the cases' own: unmoved
    texts = published(project)
    no_digests = re.sub(r"[0-9a-f]{12,}", "", texts)  # a digest may hold any 4 digits
    for name, value in SEALED_THRESHOLDS.items():
        assert name not in texts, name
        assert not re.search(rf"(?<![\d.]){re.escape(str(value))}(?![\d])", no_digests), value


def regraded_only(build: Build) -> None:
    """Grade cells ran, and nothing upstream of them."""
    assert set(build.executed) <= {"grade", "aggregate", "site", "manifest", "release"}, (
        build.stdout
    )
    assert build.ran_kinds()["grade"] > 0 and build.executed["manifest"] == 1
    for kind in ("evidence", "workspace", "image", "attempt", "oracle", "capture", "probe"):
        assert build.ran_kinds()[kind] == 0 and build.executed[kind] == 0


SEALED_THRESHOLDS = {
    "text_similarity": 0.8371,
    "position_tolerance_px": 1733,
    "overflow_tolerance_px": 2917,
    "region_pass": 0.6173,
}


def published(project: Path) -> str:
    """The release JSON and every file of the site, as text."""
    paths = [project / "releases/demo/release.json"]
    paths += [p for p in (project / "releases/demo/site").rglob("*") if p.is_file()]
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in paths)


def test_bad_rows_exit_2_with_one_line_each_and_no_traceback(
    built_demo: tuple[Path, Build], tmp_path: Path
) -> None:
    project = built_demo[0]
    good = preference_rows(project, 2).splitlines()
    first = json.loads(good[0])
    other = next(
        s
        for s in shots(Store(project / "store"), load_manifest(project, "demo"))
        if s.point != first["point"]
    )
    rows = [
        good[0],
        json.dumps(first | {"left": "f" * 64, "seed": 101}),  # unknown capture digest
        good[0],  # duplicate judgement
        '{"release": "demo", "case": ',  # malformed JSON
        json.dumps(first | {"choice": "meh", "seed": 102}),  # unknown choice
        json.dumps(first | {"right": other.digest, "seed": 103}),  # different matrix points
    ]
    prefs = tmp_path / "bad.jsonl"
    prefs.write_text("\n".join(rows) + "\n")
    parsed = recon(project, "calibrate", "fit", str(prefs), "--release", "demo")
    assert parsed.returncode == 2 and "Traceback" not in parsed.stderr, parsed.stderr
    assert f"{prefs}:4: malformed JSON" in parsed.stderr
    assert f"{prefs}:5: choice: must be 'left', 'right', 'tie' or 'both-bad'" in parsed.stderr
    del rows[3:5]  # what parses is then checked against the release's captures
    prefs.write_text("\n".join(rows) + "\n")
    checked = recon(project, "calibrate", "fit", str(prefs), "--release", "demo")
    assert checked.returncode == 2 and "Traceback" not in checked.stderr, checked.stderr
    lines = checked.stderr.splitlines()
    assert len(lines) == 3 and all(line.startswith(f"recon: {prefs}:") for line in lines)
    assert f"{prefs}:2: left: unknown capture digest" in lines[0]
    assert f"{prefs}:3: duplicate judgement" in lines[1] and f"{prefs}:1" in lines[1]
    assert f"{prefs}:4: left and right are captures of different matrix points" in lines[2]
