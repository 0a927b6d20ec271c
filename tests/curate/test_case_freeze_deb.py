"""`recon case freeze --from deb:<pkg>=<version>[:<path>]` against the real apt-get and dpkg-deb.

The .debs are built here with `dpkg-deb --build` and published in a flat `file:` repository in
tmp_path (its Packages index made by dpkg-scanpackages). APT_CONFIG points apt at a tree of
its own in tmp_path (sources, config parts, lists, cache, dpkg status, logs), so no network
is used and the host's apt state is neither read nor written.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import blake3
import pytest

from recon.cli import main
from recon.model import Case, load_yaml
from recon.model.provenance import Provenance

PKG = "recon-freeze-doc"
HTML = f"usr/share/doc/{PKG}/html"
INDEX = '<!doctype html><html lang="en"><head><link rel="stylesheet" href="css/site.css">'
FIRST = {
    f"{HTML}/index.html": f"{INDEX}<title>t</title></head><body><h1>Docs</h1></body></html>",
    f"{HTML}/css/site.css": "h1 { color: #234; }\n",
    f"usr/share/doc/{PKG}/copyright": "Format: https://www.debian.org/doc/packaging-manuals/\n",
    f"usr/share/{PKG}/data.txt": "outside the frozen path\n",
}
TOOLS = ("apt-get", "dpkg-deb", "dpkg-scanpackages")


class AptRepo:
    """A flat apt repository in ``root`` and an apt configuration that sees only it."""

    def __init__(self, root: Path) -> None:
        self.pool = root / "repo"
        self.apt = root / "apt"
        self.built = root / "built"
        for folder in (self.pool, self.built, self.apt / "state" / "lists" / "partial"):
            folder.mkdir(parents=True)
        for part in ("apt.conf.d", "sources.list.d", "preferences.d", "trusted.gpg.d"):
            (self.apt / "etc" / part).mkdir(parents=True)
        (self.apt / "cache" / "archives" / "partial").mkdir(parents=True)
        (self.apt / "etc" / "sources.list").write_text(f"deb [trusted=yes] file:{self.pool} ./\n")
        (self.apt / "status").write_text("")  # no package installed
        self.config = root / "apt.conf"
        self.config.write_text(
            f'Dir::Etc "{self.apt}/etc";\n'  # sources, parts, preferences, keys: all here
            f'Dir::State "{self.apt}/state";\n'
            f'Dir::State::status "{self.apt}/status";\n'
            f'Dir::Cache "{self.apt}/cache";\n'
            f'Dir::Log "{self.apt}/log";\n'
            'Acquire::Languages "none";\n'
        )

    def publish(self, version: str, files: dict[str, str], links: dict[str, str]) -> Path:
        """Build the package at ``version``, add it to the index, `apt-get update`; the .deb."""
        tree = self.built / version.replace(":", "_")
        (tree / "DEBIAN").mkdir(parents=True)
        (tree / "DEBIAN" / "control").write_text(
            f"Package: {PKG}\nVersion: {version}\nArchitecture: all\n"
            "Maintainer: Recon Tests <tests@example.invalid>\n"
            "Description: documentation frozen by recon's tests\n a test package.\n"
        )
        for rel, text in files.items():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_text(text)
        for rel, target in links.items():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).symlink_to(target)
        deb = self.pool / f"{PKG}_{version.replace(':', '%3a')}_all.deb"
        _run(["dpkg-deb", "--root-owner-group", "--build", str(tree), str(deb)], self.pool)
        index = _run(["dpkg-scanpackages", "--multiversion", "."], self.pool)
        (self.pool / "Packages").write_text(index)
        _run(["apt-get", "update"], self.pool, {"APT_CONFIG": str(self.config)})
        return deb


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    assert done.returncode == 0, f"{command}: {done.stderr}"
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AptRepo:
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"needs Debian's {', '.join(missing)} (apt, dpkg-dev)")
    apt = AptRepo(tmp_path / "apt-world")
    monkeypatch.setenv("APT_CONFIG", str(apt.config))
    return apt


def _freeze(project: Path, source: str) -> int:
    args = ["--root", str(project), "case", "freeze", "my-page", "--from", source]
    return main([*args, "--no-evidence"])


def _case_bytes(project: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in (project / "cases").rglob("*") if p.is_file()}


def _sha256(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def test_freeze_pins_the_files_of_a_deb_path_and_refreezing_changes_nothing(
    project: Path, repo: AptRepo, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    host_file = tmp_path / "host-only.js"
    host_file.write_text("a host file that must not reach the reference\n")
    links = {f"{HTML}/js/jquery.js": str(host_file), f"{HTML}/start.html": "index.html"}
    deb = repo.publish("1.0-1", FIRST, links)
    assert _freeze(project, f"deb:{PKG}=1.0-1:{HTML}") == 0
    case = project / "cases" / "my-page"
    reference = case / "sealed" / "reference"
    held = {p.relative_to(reference).as_posix() for p in reference.rglob("*") if p.is_file()}
    # the files under the path (an in-package link is followed), nothing from outside it
    assert held == {"index.html", "css/site.css", "start.html"}
    assert (reference / "css" / "site.css").read_text() == FIRST[f"{HTML}/css/site.css"]
    assert (reference / "start.html").read_text() == FIRST[f"{HTML}/index.html"]
    provenance = load_yaml(Provenance, case / "provenance.yaml")
    assert (provenance.kind, provenance.package, provenance.version, provenance.registry) == (
        "deb",
        PKG,
        "1.0-1",
        "debian",
    )
    assert provenance.tarball_integrity == _sha256(deb)
    assert [(a.path, a.source, a.blake3) for a in provenance.artifacts] == [
        (f"sealed/reference/{rel}", f"{HTML}/{rel}", blake3.blake3(data).hexdigest())
        for rel, data in sorted((r, (reference / r).read_bytes()) for r in held)
    ]
    assert load_yaml(Case, case / "case.yaml").version == 1
    before = _case_bytes(project)
    capsys.readouterr()
    assert _freeze(project, f"deb:{PKG}=1.0-1:/{HTML}/") == 0  # the same path, written loosely
    out = capsys.readouterr().out
    assert f"unchanged: 3 file(s) of deb {PKG}@1.0-1 ({_sha256(deb)})" in out
    assert _case_bytes(project) == before


def test_a_new_package_version_bumps_the_case_version_and_records_the_change(
    project: Path, repo: AptRepo
) -> None:
    repo.publish("1.0-1", FIRST, {})
    assert _freeze(project, f"deb:{PKG}=1.0-1:{HTML}") == 0
    changed = {**FIRST, f"{HTML}/css/site.css": "h1 { color: #432; }\n"}
    deb = repo.publish("1:2.0-1", changed, {})  # an epoch: the version itself holds a colon
    assert _freeze(project, f"deb:{PKG}=1:2.0-1:{HTML}") == 0
    case = project / "cases" / "my-page"
    assert load_yaml(Case, case / "case.yaml").version == 2
    provenance = load_yaml(Provenance, case / "provenance.yaml")
    assert (provenance.version, provenance.tarball_integrity) == ("1:2.0-1", _sha256(deb))
    assert [
        (h.version, h.source_version, h.added, h.changed, h.removed) for h in provenance.history
    ] == [(2, "1:2.0-1", [], ["css/site.css"], [])]
    assert provenance.history[0].note == f"frozen from deb {PKG}@1:2.0-1"
    css = case / "sealed" / "reference" / "css" / "site.css"
    assert css.read_text() == "h1 { color: #432; }\n"
    # going back to the older version is a change too, never a silent overwrite
    assert _freeze(project, f"deb:{PKG}=1.0-1:{HTML}") == 0
    assert load_yaml(Case, case / "case.yaml").version == 3
    history = load_yaml(Provenance, case / "provenance.yaml").history
    assert [(h.version, h.source_version, h.changed) for h in history] == [
        (2, "1:2.0-1", ["css/site.css"]),
        (3, "1.0-1", ["css/site.css"]),
    ]
    assert css.read_text() == FIRST[f"{HTML}/css/site.css"]


ESCAPE = "/".join([HTML, *[".."] * 6])  # above the extracted data: the download folder


@pytest.mark.parametrize(
    ("source", "says"),
    [
        (
            f"deb:{PKG}=9.9-1:{HTML}",
            f"(E: Version '9.9-1' for '{PKG}' was not found); apt knows {PKG} 1:2.0-1, 1.0-1: "
            "pick one of those",
        ),
        (
            f"deb:no-such-doc=1.0-1:{HTML}",
            "(E: Unable to locate package no-such-doc); apt knows no package no-such-doc: "
            "check the name, or add the archive",
        ),
        (
            f"deb:{PKG}=1.0-1:usr/share/doc/{PKG}/manual",
            f"has no folder 'usr/share/doc/{PKG}/manual' (usr/share/doc/{PKG} holds copyright, "
            "html/); fix the path",
        ),
        (f"deb:{PKG}=1.0-1:{HTML}/index.html", "is a file; give the folder that holds it"),
        (f"deb:{PKG}=1.0-1:{ESCAPE}", "leads outside the package"),
        (f"deb:{PKG}=v1:{HTML}", "write deb:<pkg>=<version>[:<path>] (a Debian version starts"),
        (f"deb:{PKG}", "write deb:<pkg>=<version>[:<path>]"),
    ],
)
def test_a_missing_version_package_or_path_is_one_clear_error(
    project: Path, repo: AptRepo, capsys: pytest.CaptureFixture[str], source: str, says: str
) -> None:
    repo.publish("1.0-1", FIRST, {})
    repo.publish("1:2.0-1", FIRST, {})
    _refused(project, source, says, capsys)


def test_a_deb_that_does_not_match_apts_index_is_refused(
    project: Path, repo: AptRepo, capsys: pytest.CaptureFixture[str]
) -> None:
    deb = repo.publish("1.0-1", FIRST, {})
    with deb.open("ab") as tampered:  # the archive now serves other bytes than it indexed
        tampered.write(b"\0")
    says = (
        f"(E: Failed to fetch file:{deb.parent}/./{deb.name}  Hash Sum mismatch); "
        f"apt knows {PKG} 1.0-1 but could not fetch it"
    )
    _refused(project, f"deb:{PKG}=1.0-1:{HTML}", says, capsys)


def _refused(project: Path, source: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Freezing ``source`` exits 2 with one line saying ``says``, and changes no byte."""
    before = _case_bytes(project)
    capsys.readouterr()
    assert _freeze(project, source) == 2
    err = capsys.readouterr().err
    assert says in err, err
    assert err.startswith(f"recon: --from {source}: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert _case_bytes(project) == before
