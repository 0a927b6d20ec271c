"""What an attempt sees of ``entries/``: its own entry's declared ``agent.files``, nothing else.

A scripted agent's files (``entries/scripted/faithful.py`` and the answers it copies) live
in the shared ``entries/`` folder. Mounting that folder would hand every Candidate every
other entry's files, the faithful answers among them. Instead each attempt gets a fresh
folder holding copies of the files its entry declares, at the same relative paths (so
``{entry_dir}/scripted/faithful.py`` still names the script), read-only; the docker
backend mounts it read-only at ``/entry``, the native backend passes it as ``{entry_dir}``.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path

from recon.errors import ConfigError
from recon.model import Entry
from recon.sandbox.docker import ENTRY_DIR, Mount

FILE_MODE = 0o444
EXEC_MODE = 0o555
DIR_MODE = 0o555


def copy_agent_files(entries_dir: Path, entry_id: str, files: Sequence[str], dest: Path) -> Path:
    """Copy the declared ``files`` (paths relative to ``entries_dir``) into ``dest``, which
    must not exist yet; return ``dest``. Files keep their relative paths and their execute
    bit; everything is made read-only. A path that is absolute, climbs out with ``..``,
    leads outside ``entries_dir`` through a link, or names no regular file is refused."""
    root = entries_dir.resolve()
    sources = [(rel, _source(root, entry_id, i, rel)) for i, rel in enumerate(files)]
    dest.mkdir(parents=True)
    for rel, src in sources:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        executable = src.stat().st_mode & stat.S_IXUSR
        target.chmod(EXEC_MODE if executable else FILE_MODE)
    _seal_folders(dest)
    return dest


def _source(root: Path, entry_id: str, index: int, rel: str) -> Path:
    where = f"entries/{entry_id}.yaml: agent.files[{index}]"
    fix = "name a file inside entries/ by a relative path, such as scripted/agent.py"
    parts = rel.split("/")
    if not rel or rel.startswith("/") or "\\" in rel or "\0" in rel:
        raise ConfigError(f"{where}: {rel!r} is not a relative path; {fix}")
    if ".." in parts or posixpath.normpath(rel) != rel:
        raise ConfigError(f"{where}: {rel!r} is not a normalised path inside entries/; {fix}")
    src = (root / rel).resolve()
    if root not in src.parents:
        raise ConfigError(f"{where}: {rel!r} leads outside entries/ through a link; {fix}")
    if not src.is_file():
        raise ConfigError(f"{where}: {rel!r} is not a file under entries/; {fix}")
    return src


def _seal_folders(dest: Path) -> None:
    """Make every folder of the copy read-only, deepest first."""
    folders = [Path(top) for top, _, _ in os.walk(dest)]
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        folder.chmod(DIR_MODE)


def entry_mount(entries_dir: Path, entry: Entry, dest: Path) -> Mount:
    """The read-only ``/entry`` mount of one docker attempt: a copy of ``entry``'s declared
    files in ``dest`` (a folder of the attempt's own temporary space)."""
    return Mount(copy_agent_files(entries_dir, entry.id, entry.agent.files, dest), ENTRY_DIR)
