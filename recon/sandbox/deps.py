"""The vendored offline dependency store (DESIGN §5.1).

``offline_deps.yaml`` pins npm packages and Python wheels, with their full closure and
integrity hashes. ``fetch`` (``recon deps fetch``) downloads them once with npm and pip into
``<deps root>/<store digest[:16]>/`` — the only registry access, never during an attempt —
building in a temporary folder that is renamed into place, so a folder that exists is
complete. Layout::

    npm/<name with / as %2f>.json   packuments holding the pinned version only
    npm/tarballs/<file>.tgz         tarballs of the packages for this platform
    wheels/*.whl                    the wheels
    lock.json                       the lock it was fetched from

Attempts mount it read-only at ``/deps``; ``deps_registry.py`` serves ``npm/`` inside the
container and pip reads ``wheels/`` with ``--no-index --find-links``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from recon.errors import ConfigError, HarnessError
from recon.store import digest_json

LOCK = Path(__file__).with_name("offline_deps.yaml")
MOUNT = "/deps"
REGISTRY_PORT = 4873
TARBALL_URL = f"http://127.0.0.1:{REGISTRY_PORT}/-/tarballs/"
LAYOUT = 2  # bump when the folder layout or the packuments written change


@dataclass(frozen=True)
class Fetched:
    path: Path
    fetched: bool  # False: it was already there
    took_s: float
    size_bytes: int
    npm_packages: int
    wheels: int


@cache
def load_lock(path: Path = LOCK) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise ConfigError(f"{path}: cannot read the dependency lock ({err})") from err
    for key in ("npm", "python"):
        if not isinstance(data, dict) or not isinstance(data.get(key), dict):
            raise ConfigError(f"{path}: {key}: section required; regenerate the lock")
    return dict(data)


def lock_digest(path: Path = LOCK) -> str:
    return digest_json(load_lock(path))


def store_digest(path: Path = LOCK) -> str:
    """Names the fetched folder: the lock and the layout this code writes."""
    return digest_json({"lock": load_lock(path), "layout": LAYOUT})


def deps_dir(root: Path, lock: Path = LOCK) -> Path:
    """The fetched store of ``lock`` under ``root`` (``RECON_DEPS``, else ``<store>/deps``:
    :meth:`recon.project.settings.Settings.deps_root`)."""
    return root / store_digest(lock)[:16]


def require(root: Path, lock: Path = LOCK) -> Path:
    """The fetched store, or a harness error saying how to fetch it."""
    path = deps_dir(root, lock)
    if not (path / "lock.json").is_file():
        raise HarnessError(
            f"the offline dependency store {path} is missing; run `recon deps fetch` "
            "(or `make deps`) once, with registry access"
        )
    return path


def fetch(root: Path, lock: Path = LOCK) -> Fetched:
    """Fetch the lock's packages under ``root`` unless they are there already (a no-op)."""
    started = time.monotonic()
    final = deps_dir(root, lock)
    data = load_lock(lock)
    if (final / "lock.json").is_file():
        return _summary(final, False, started)
    final.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=final.parent) as tmp:
        work = Path(tmp) / "deps"
        _fetch_npm(data["npm"], work / "npm")
        _fetch_wheels(data["python"], work / "wheels")
        (work / "lock.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        for path in [work, *work.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        try:
            work.rename(final)
        except OSError:
            if not (final / "lock.json").is_file():  # not a concurrent fetch finishing first
                raise
    return _summary(final, True, started)


def _summary(path: Path, fetched: bool, started: float) -> Fetched:
    files = [p for p in path.rglob("*") if p.is_file()]
    return Fetched(
        path=path,
        fetched=fetched,
        took_s=round(time.monotonic() - started, 1),
        size_bytes=sum(p.stat().st_size for p in files),
        npm_packages=len(list((path / "npm").glob("*.json"))),
        wheels=len(list((path / "wheels").glob("*.whl"))),
    )


# -- npm ---------------------------------------------------------------------------------


def _matches(pkg: dict[str, Any], platform: dict[str, str]) -> bool:
    return all(platform[k] in pkg.get(k, [platform[k]]) for k in ("os", "cpu", "libc"))


def _fetch_npm(section: dict[str, Any], out: Path) -> None:
    tarballs = out / "tarballs"
    tarballs.mkdir(parents=True)
    platform = section["platform"]
    wanted = [p for p in section["packages"] if _matches(p, platform)]
    specs = [f"{p['name']}@{p['version']}" for p in wanted]
    if specs:
        _run(["npm", "pack", "--json", "--pack-destination", str(tarballs), *specs], "npm pack")
    packuments: dict[str, dict[str, Any]] = {}
    for pkg in section["packages"]:
        if _matches(pkg, platform):
            manifest = _manifest_from_tarball(pkg, tarballs)
        else:  # another platform: a manifest npm reads to skip it; no tarball
            manifest = {k: v for k, v in pkg.items() if k in ("name", "version", "os", "cpu")}
            manifest["dist"] = {"integrity": pkg["integrity"], "tarball": _tarball_url(pkg)}
        packument = packuments.setdefault(pkg["name"], {"name": pkg["name"], "versions": {}})
        packument["versions"][pkg["version"]] = manifest
        # One name may hold several pinned versions: @openai/codex's platform builds are
        # versions of it (0.171.0-linux-x64), its optional dependencies npm: aliases of them.
        if "latest" not in packument.get("dist-tags", {}) or not _platform_bound(pkg):
            packument["dist-tags"] = {"latest": pkg["version"]}
    for name, packument in packuments.items():
        (out / f"{_escape(name)}.json").write_text(json.dumps(packument, indent=1))


def _platform_bound(pkg: dict[str, Any]) -> bool:
    return any(k in pkg for k in ("os", "cpu", "libc"))


def _tarball_name(pkg: dict[str, Any]) -> str:
    """npm pack's file name: @scope/name@1.0.0 -> scope-name-1.0.0.tgz."""
    return f"{pkg['name'].lstrip('@').replace('/', '-')}-{pkg['version']}.tgz"


def _tarball_url(pkg: dict[str, Any]) -> str:
    return TARBALL_URL + _tarball_name(pkg)


def _escape(name: str) -> str:
    return name.replace("/", "%2f")


MANIFEST_FIELDS = (
    "name", "version", "dependencies", "optionalDependencies", "peerDependencies",
    "peerDependenciesMeta", "bin", "engines", "os", "cpu", "libc", "license",
)  # fmt: skip


def _manifest_from_tarball(pkg: dict[str, Any], tarballs: Path) -> dict[str, Any]:
    path = tarballs / _tarball_name(pkg)
    data = path.read_bytes()
    algo, _, expected = pkg["integrity"].partition("-")
    got = base64.b64encode(hashlib.new(algo, data).digest()).decode()
    if got != expected:
        path.unlink()
        raise HarnessError(f"{path.name}: integrity mismatch ({algo}); refusing the tarball")
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        member = next(m for m in tar if m.name.split("/", 1)[-1] == "package.json")
        handle = tar.extractfile(member)
        assert handle is not None
        meta = json.loads(handle.read())
    manifest = {k: meta[k] for k in MANIFEST_FIELDS if k in meta}
    scripts = meta.get("scripts", {})
    if any(s in scripts for s in ("preinstall", "install", "postinstall")):
        manifest["hasInstallScript"] = True
    manifest["dist"] = {"integrity": pkg["integrity"], "tarball": _tarball_url(pkg)}
    return manifest


# -- wheels --------------------------------------------------------------------------------


def wheel_rounds(wheels: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The pinned wheels in as few rounds as hold each project name once, in order: one
    pip agent's closure may pin another version of a project another agent's pins (aider
    pins its own litellm; each agent has its own venv), and ``pip download`` refuses two
    versions of one name in one requirements file."""
    rounds: list[list[dict[str, Any]]] = []
    seen: list[set[str]] = []
    for wheel in wheels:
        name = re.sub(r"[-_.]+", "-", str(wheel["name"])).lower()
        index = next((i for i, names in enumerate(seen) if name not in names), len(rounds))
        if index == len(rounds):
            rounds.append([])
            seen.append(set())
        rounds[index].append(wheel)
        seen[index].add(name)
    return rounds


def _fetch_wheels(section: dict[str, Any], out: Path) -> None:
    out.mkdir(parents=True)
    if not section["wheels"]:
        return
    platforms = [arg for p in section["platforms"] for arg in ("--platform", p)]
    version = section["python"]
    for batch in wheel_rounds(section["wheels"]):
        with tempfile.NamedTemporaryFile("w", suffix=".txt") as req:
            for wheel in batch:
                req.write(f"{wheel['name']}=={wheel['version']} --hash=sha256:{wheel['sha256']}\n")
            req.flush()
            _run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--require-hashes",
                 "--only-binary=:all:", "--python-version", version, "--implementation", "cp",
                 "--abi", f"cp{version.replace('.', '')}", "--abi", "abi3", "--abi", "none",
                 *platforms, "-r", req.name, "-d", str(out)],
                "pip download",
            )  # fmt: skip
    names = {p.name for p in out.glob("*.whl")}
    missing = [w["file"] for w in section["wheels"] if w["file"] not in names]
    if missing:
        raise HarnessError(f"pip download did not fetch {', '.join(missing)}")


def _run(command: list[str], what: str) -> None:
    if shutil.which(command[0]) is None and not Path(command[0]).exists():
        raise HarnessError(f"{what}: {command[0]} is not installed (apt-get install npm)")
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-1500:]
        raise HarnessError(f"{what} failed ({proc.returncode}):\n{tail}")
