"""`recon case freeze --from DIR`: the reference and its provenance, pinned; re-freezing the
same files changes nothing, changed files bump the case version (no network in tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.cli import main
from recon.model import Case, load_yaml
from recon.model.provenance import Provenance


def _site(folder: Path, heading: str = "Hello") -> Path:
    (folder / "css").mkdir(parents=True, exist_ok=True)
    (folder / "index.html").write_text(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>t</title>'
        f'<link rel="stylesheet" href="css/site.css"></head><body><main><h1>{heading}</h1>'
        "<p>Replace this paragraph.</p></main></body></html>"
    )
    (folder / "css" / "site.css").write_text("h1 { color: #234; }\n")
    return folder


def _freeze(project: Path, source: Path | str) -> int:
    args = ["--root", str(project), "case", "freeze", "my-page", "--from", str(source)]
    return main([*args, "--no-evidence"])


def test_freeze_pins_a_folder_and_refreezing_changes_nothing(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    site = _site(tmp_path / "site", heading="Replace me")
    assert _freeze(project, site) == 0
    case = project / "cases" / "my-page"
    provenance = load_yaml(Provenance, case / "provenance.yaml")
    assert provenance.kind == "local"
    assert provenance.tarball_integrity.startswith("blake3:")
    assert [a.path for a in provenance.artifacts] == [
        "sealed/reference/css/site.css",
        "sealed/reference/index.html",
    ]
    assert (
        case / "sealed" / "reference" / "css" / "site.css"
    ).read_text() == "h1 { color: #234; }\n"
    # the first freeze replaces the scaffold's placeholder: still version 1
    assert load_yaml(Case, case / "case.yaml").version == 1
    before = {p: p.read_bytes() for p in case.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert _freeze(project, site) == 0
    assert "unchanged: 2 file(s)" in capsys.readouterr().out
    assert {p: p.read_bytes() for p in case.rglob("*") if p.is_file()} == before
    assert main(["--root", str(project), "validate", "--no-render", "my-page"]) == 0


def test_a_changed_artifact_bumps_the_version_and_records_the_difference(
    project: Path, tmp_path: Path
) -> None:
    site = _site(tmp_path / "site")
    assert _freeze(project, site) == 0
    (site / "css" / "site.css").write_text("h1 { color: #432; }\n")
    (site / "about.html").write_text("<p>about</p>")
    assert _freeze(project, site) == 0
    case = project / "cases" / "my-page"
    assert load_yaml(Case, case / "case.yaml").version == 2
    assert "# The case's identity" in (case / "case.yaml").read_text()  # comments kept
    history = load_yaml(Provenance, case / "provenance.yaml").history
    assert [(h.version, h.added, h.changed, h.removed) for h in history] == [
        (2, ["about.html"], ["css/site.css"], [])
    ]
    assert (case / "sealed" / "reference" / "about.html").is_file()


def test_a_url_without_network_and_a_bad_source_are_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _freeze(project, "http://127.0.0.1:9/index.html") == 2
    assert "no network reaches 127.0.0.1" in capsys.readouterr().err
    assert _freeze(project, "npm:Not A Package") == 2
    assert "write npm:<pkg>@<version>[:<path>]" in capsys.readouterr().err
    assert _freeze(project, "no/such/folder") == 2
    assert "no such folder" in capsys.readouterr().err
