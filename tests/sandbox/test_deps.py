"""The offline dependency store: the lock, the atomic idempotent fetch, the in-container
npm registry. No test here talks to a registry: the store is fetched by `make deps`."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from recon.errors import HarnessError
from recon.sandbox import deps
from tests.conftest import deps_root

REGISTRY = Path(deps.__file__).with_name("deps_registry.py")


@pytest.fixture(scope="module")
def store() -> Path:
    try:
        return deps.require(deps_root())
    except HarnessError as err:
        pytest.fail(f"{err} (make test runs `make deps` first)")


def test_lock_pins_exact_versions_with_hashes() -> None:
    lock = deps.load_lock()
    names = {p["name"]: p["version"] for p in lock["npm"]["packages"]}
    assert {"vite", "react", "react-dom", "bootstrap"} <= names.keys()
    assert all(p["integrity"].startswith("sha512-") for p in lock["npm"]["packages"])
    wheels = {w["name"]: w for w in lock["python"]["wheels"]}
    assert wheels["mini-swe-agent"]["version"] == "1.17.2"
    assert all(len(w["sha256"]) == 64 and w["file"].endswith(".whl") for w in wheels.values())
    assert deps.lock_digest() == deps.lock_digest()  # canonical: names the store folder


def test_two_pinned_versions_of_one_project_are_fetched_in_two_rounds() -> None:
    """aider pins its own litellm beside mini-swe-agent's: pip download refuses two versions
    of one name in one requirements file, so each round holds a name once."""
    lock = deps.load_lock()["python"]["wheels"]
    rounds = deps.wheel_rounds(lock)
    assert sorted(map(str, (w["file"] for r in rounds for w in r))) == sorted(
        w["file"] for w in lock
    )
    litellm = sorted(w["version"] for w in lock if w["name"] == "litellm")
    assert litellm == ["1.77.7", "1.81.10"] and len(rounds) == 2
    for batch in rounds:
        names = [w["name"].lower().replace("_", "-") for w in batch]
        assert len(names) == len(set(names))
    mixed = [
        {"name": "Typing_Extensions", "version": "1"},
        {"name": "typing-extensions", "version": "2"},
    ]
    assert deps.wheel_rounds(mixed) == [[mixed[0]], [mixed[1]]]  # one project, spelled twice


def test_fetched_store_matches_the_lock(store: Path) -> None:
    lock = deps.load_lock()
    assert json.loads((store / "lock.json").read_text()) == lock
    assert store.name == deps.store_digest()[:16]
    wheels = {p.name for p in (store / "wheels").glob("*.whl")}
    assert wheels == {w["file"] for w in lock["python"]["wheels"]}
    vite = json.loads((store / "npm" / "vite.json").read_text())
    assert list(vite["versions"]) == [vite["dist-tags"]["latest"]] == ["5.4.11"]
    # other platforms' binaries: a manifest for npm to skip, no tarball
    darwin = json.loads((store / "npm" / "@esbuild%2fdarwin-arm64.json").read_text())
    assert darwin["versions"]["0.21.5"]["os"] == ["darwin"]
    assert not (store / "npm" / "tarballs" / "esbuild-darwin-arm64-0.21.5.tgz").exists()
    assert (store / "npm" / "tarballs" / "esbuild-linux-x64-0.21.5.tgz").is_file()
    # one name, several pinned versions: Codex's launcher and its platform builds
    codex = json.loads((store / "npm" / "@openai%2fcodex.json").read_text())
    assert codex["dist-tags"] == {"latest": "0.171.0"} and len(codex["versions"]) == 7
    aliased = codex["versions"]["0.171.0"]["optionalDependencies"]["@openai/codex-linux-x64"]
    assert aliased == "npm:@openai/codex@0.171.0-linux-x64" and aliased[18:] in codex["versions"]
    fetched = sorted(p.name for p in (store / "npm" / "tarballs").glob("openai-codex-*"))
    assert fetched == ["openai-codex-0.171.0-linux-x64.tgz", "openai-codex-0.171.0.tgz"]


def test_second_fetch_is_a_no_op(store: Path) -> None:
    again = deps.fetch(store.parent)
    assert again.fetched is False and again.path == store
    assert again.wheels == len(deps.load_lock()["python"]["wheels"])


@pytest.fixture
def own_store(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests name their store root; ``RECON_DEPS`` (set for the shared store) would
    override it and write a test store into the shared one."""
    monkeypatch.delenv("RECON_DEPS", raising=False)


def test_fetch_builds_in_a_temporary_folder_and_renames(tmp_path: Path, own_store: None) -> None:
    lock = tmp_path / "empty.yaml"
    empty = {"platform": {"os": "linux", "cpu": "x64", "libc": "glibc"}, "packages": []}
    python = {"python": "3.11", "platforms": [], "wheels": []}
    lock.write_text(json.dumps({"schema_version": 1, "npm": empty, "python": python}))
    first = deps.fetch(tmp_path / "store" / "deps", lock)
    assert first.fetched and (first.path / "lock.json").is_file()
    assert [p.name for p in first.path.parent.iterdir()] == [first.path.name]  # no temp left
    second = deps.fetch(tmp_path / "store" / "deps", lock)
    assert not second.fetched and second.path == first.path


def test_missing_store_says_how_to_fetch_it(tmp_path: Path, own_store: None) -> None:
    with pytest.raises(HarnessError, match=r"recon deps fetch"):
        deps.require(tmp_path / "nostore")


@pytest.fixture
def registry(store: Path) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, str(REGISTRY), str(store / "npm"), "0"], stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        port = _listening_port(proc.pid)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.kill()
        proc.wait()


def _listening_port(pid: int) -> int:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        target = str(fd.readlink())
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        cols = line.split()
        if cols[9] in inodes and cols[3] == "0A":  # LISTEN
            return int(cols[1].split(":")[1], 16)
    raise AssertionError("the registry is not listening")


def test_registry_serves_packuments_and_verified_tarballs(registry: str) -> None:
    doc = json.loads(urllib.request.urlopen(f"{registry}/@esbuild%2flinux-x64").read())
    manifest = doc["versions"]["0.21.5"]
    assert manifest["cpu"] == ["x64"] and manifest["dist"]["tarball"].startswith(
        "http://127.0.0.1:4873/-/tarballs/"
    )
    react = json.loads(urllib.request.urlopen(f"{registry}/react").read())["versions"]["18.3.1"]
    tarball = react["dist"]["tarball"].rsplit("/", 1)[1]
    data = urllib.request.urlopen(f"{registry}/-/tarballs/{tarball}").read()
    digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
    assert react["dist"]["integrity"] == f"sha512-{digest}"
    assert react["dependencies"] == {"loose-envify": "^1.1.0"}


@pytest.mark.parametrize("path", ["/left-pad-nonexistent", "/-/tarballs/x-1.0.0.tgz", "/../lock"])
def test_registry_answers_404_for_what_is_not_in_the_store(registry: str, path: str) -> None:
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(registry + path)
    assert err.value.code == 404
    assert b"not in the offline dependency store" in err.value.read()
