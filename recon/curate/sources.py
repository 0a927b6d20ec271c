"""Where ``recon case freeze --from SOURCE`` takes the authoritative artifact from.

SOURCE is one of

- a local folder (``DIR``): every file under it; pinned as a ``local`` source by the
  blake3 of its tree listing;
- ``npm:<pkg>@<version>[:<path>]``: the package tarball as ``npm pack`` gets it (from
  npm's cache, else its registry), pinned by the tarball's ``integrity``; the files under
  ``package/<path>`` (default: the whole package);
- ``deb:<pkg>=<version>[:<path>]``: the .deb as ``apt-get download`` gets it (from the
  archives of apt's sources; ``APT_CONFIG`` names another apt configuration), pinned by its
  sha256; the files under ``<path>`` of its data (``dpkg-deb -x``). A version may carry an
  epoch (``deb:pkg=1:2.0-1:usr/share/doc/pkg``);
- ``http(s)://...``: one page, fetched once; refused with a clear error when no network
  reaches the host.

Each gives a :class:`Fetched`: the files (``{relative path: bytes}``) and the facts of the
source provenance records. Archive members that would land outside the extraction
folder, links and special files are refused by tarfile's ``data`` filter; a ``<path>``
that leads outside the package is refused, and links that leave the folder frozen are
not followed (:func:`recon.curate.pin.read_tree`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import subprocess
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from recon.curate.pin import Tree, read_tree, tree_integrity
from recon.errors import ConfigError
from recon.model.provenance import SourceKind

NPM = re.compile(r"^npm:(?P<pkg>(@[a-z0-9._~-]+/)?[a-z0-9._~-]+)@(?P<ver>[^:\s]+)(:(?P<path>.*))?$")
# a Debian version is [epoch:]upstream[-revision], its upstream part starting with a digit
DEB = re.compile(r"^deb:(?P<pkg>[a-z0-9][a-z0-9.+-]+)=(?P<ver>(\d+:)?\d[^:\s]*)(:(?P<path>.*))?$")
FETCH_TIMEOUT_S = 300
URL_TIMEOUT_S = 10
FORMS = "a folder, npm:<pkg>@<version>[:<path>], deb:<pkg>=<version>[:<path>] or a URL"


@dataclass(frozen=True)
class Fetched:
    """The artifact's files and how provenance pins their source."""

    files: Tree
    kind: SourceKind
    package: str
    version: str
    registry: str
    integrity: str
    license: str
    publisher: str
    prefix: str  # each file's path inside the source is prefix + its path here


def fetch(source: str, root: Path) -> Fetched:
    """The files and facts of ``source`` (a relative folder is taken from ``root``)."""
    if source.startswith("npm:"):
        return _npm(source)
    if source.startswith("deb:"):
        return _deb(source)
    if re.match(r"^[a-z][a-z0-9+.-]*://", source):
        return _url(source)
    folder = Path(source) if Path(source).is_absolute() else root / source
    if not folder.is_dir():
        raise ConfigError(f"--from {source}: no such folder; give {FORMS}")
    return _local(folder)


def _local(folder: Path) -> Fetched:
    files = read_tree(folder)
    if not files:
        raise ConfigError(f"--from {folder}: the folder holds no file; freeze a built site")
    return Fetched(
        files, "local", folder.resolve().name, "local", "local", tree_integrity(files),
        "", "", f"{folder.resolve().name}/",
    )  # fmt: skip


def _run(command: list[str], cwd: Path, what: str, fix: Callable[[], str] = lambda: "") -> str:
    """``command``'s output; when it fails, one line: its error and ``fix()`` (or a hint)."""
    try:
        done = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=FETCH_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise ConfigError(f"--from {what}: `{' '.join(command)}` could not run: {err}") from None
    if done.returncode != 0:
        raise ConfigError(
            f"--from {what}: `{' '.join(command)}` failed ({_error_line(done.stderr)}); "
            f"{fix() or 'check the name and version'}"
        )
    return done.stdout


def _error_line(stderr: str) -> str:
    """The line of a tool's stderr that says what failed: apt's first ``E:`` line (a hash
    mismatch ends with the file's date, not the error), else the last line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith("E:")]
    return (said[:1] or lines[-1:] or [""])[0][:300]


def _npm(source: str) -> Fetched:
    m = NPM.match(source)
    if m is None:
        raise ConfigError(f"--from {source}: write npm:<pkg>@<version>[:<path>]")
    pkg, ver, sub = m["pkg"], m["ver"], (m["path"] or "").strip("/")
    with tempfile.TemporaryDirectory(prefix="recon-npm-") as tmp:
        out = _run(
            ["npm", "pack", f"{pkg}@{ver}", "--json", "--pack-destination", tmp], Path(tmp), source
        )
        packed = json.loads(out)[0]
        unpacked = Path(tmp) / "x"
        with tarfile.open(Path(tmp) / packed["filename"]) as tar:
            tar.extractall(unpacked, filter="data")
        manifest = json.loads((unpacked / "package" / "package.json").read_text(encoding="utf-8"))
        files = _under(unpacked / "package", sub, source)
    author = manifest.get("author")
    publisher = author.get("name", "") if isinstance(author, dict) else str(author or "")
    return Fetched(
        files, "npm", pkg, str(packed["version"]), "npm", str(packed["integrity"]),
        str(manifest.get("license") or ""), publisher, "package/" + (f"{sub}/" if sub else ""),
    )  # fmt: skip


def _deb(source: str) -> Fetched:
    m = DEB.match(source)
    if m is None:
        raise ConfigError(
            f"--from {source}: write deb:<pkg>=<version>[:<path>] (a Debian version starts "
            "with a digit, after an optional epoch `N:`)"
        )
    pkg, ver, sub = m["pkg"], m["ver"], (m["path"] or "").strip("/")
    with tempfile.TemporaryDirectory(prefix="recon-deb-") as tmp:
        fix = functools.partial(_apt_hint, pkg, ver)
        _run(["apt-get", "download", f"{pkg}={ver}"], Path(tmp), source, fix)
        debs = sorted(Path(tmp).glob("*.deb"))
        if len(debs) != 1:
            raise ConfigError(f"--from {source}: apt-get download left {len(debs)} .deb files")
        digest = hashlib.sha256(debs[0].read_bytes()).hexdigest()
        _run(["dpkg-deb", "-x", str(debs[0]), str(Path(tmp) / "x")], Path(tmp), source)
        files = _under(Path(tmp) / "x", sub, source)
    return Fetched(
        files, "deb", pkg, ver, "debian", f"sha256:{digest}", "", "",
        f"{sub}/" if sub else "",
    )  # fmt: skip


def _apt_hint(pkg: str, ver: str) -> str:
    """What to do when apt could not download ``pkg=ver``, from the versions apt knows."""
    try:
        done = subprocess.run(
            ["apt-cache", "madison", pkg], capture_output=True, text=True, timeout=URL_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    rows = [line.split("|") for line in done.stdout.splitlines()]
    known = list(dict.fromkeys(r[1].strip() for r in rows if len(r) >= 3 and r[0].strip() == pkg))
    if not known:
        return (
            f"apt knows no package {pkg}: check the name, or add the archive that has it to "
            "apt's sources and run `apt-get update`"
        )
    if ver not in known:
        return f"apt knows {pkg} {', '.join(known)}: pick one of those"
    return f"apt knows {pkg} {ver} but could not fetch it: run `apt-get update` and retry"


def _under(folder: Path, sub: str, source: str) -> Tree:
    base = folder / sub if sub else folder
    if base.resolve() != folder.resolve() and folder.resolve() not in base.resolve().parents:
        raise ConfigError(
            f"--from {source}: the path {sub!r} leads outside the package (through `..` or a "
            "link); give a folder inside it"
        )
    if base.is_file():
        raise ConfigError(f"--from {source}: {sub!r} is a file; give the folder that holds it")
    if not base.is_dir():
        raise ConfigError(
            f"--from {source}: the source has no folder {sub!r} ({_nearest(folder, sub)}); "
            "fix the path"
        )
    files = read_tree(base)
    if not files:
        raise ConfigError(f"--from {source}: {sub or 'the source'} holds no file")
    return files


def _nearest(folder: Path, sub: str) -> str:
    """What the deepest existing folder on the way to ``sub`` holds (to show the way)."""
    at, parts = folder, Path(sub).parts
    for part in parts:
        if not (at / part).is_dir():
            break
        at = at / part
    names = sorted(p.name + ("/" if p.is_dir() else "") for p in at.iterdir())
    where = at.relative_to(folder).as_posix() if at != folder else "its top"
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return f"{where} holds {shown or 'nothing'}"


def _url(source: str) -> Fetched:
    parts = urllib.parse.urlsplit(source)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--from {source}: only http(s) URLs are fetched; give {FORMS}")
    try:
        with urllib.request.urlopen(source, timeout=URL_TIMEOUT_S) as reply:
            data = reply.read()
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise ConfigError(
            f"--from {source}: no network reaches {parts.hostname} ({reason}); save the site "
            "where a network exists and freeze that folder (`--from DIR`)"
        ) from None
    name = parts.path.rsplit("/", 1)[-1] or "index.html"
    files = {name: data}
    return Fetched(
        files, "local", parts.hostname, "fetched", source, tree_integrity(files), "", "", ""
    )
