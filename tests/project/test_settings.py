"""One settings object (issue 26 item 3): every ``RECON_*`` variable is read once, by
:meth:`Settings.from_env`, and passed in; nothing reads the environment at import time."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from recon.errors import EXIT_BAD_INPUT, ConfigError
from recon.project import Project
from recon.project.settings import Settings
from recon.store import StoreLayout
from tests.conftest import REPO

CONTRACT = {
    # The harness sets these for a process it starts; they are not settings of its own.
    "recon/curate/ladder_run.py": "sets RECON_STORE for the ladder's child doit build",
}
"""Modules whose lines name ``os.environ`` and ``RECON_`` together, and why."""


def test_from_env_reads_a_given_mapping(tmp_path: Path) -> None:
    found = Settings.from_env(
        {
            "RECON_STORE": str(tmp_path / "s"),
            "RECON_SEALED": str(tmp_path / "sealed"),
            "RECON_VERIFY_ON_READ": "0",
            "RECON_BROWSERS": "3",
            "RECON_CHROMIUM": "/opt/chromium",
            "RECON_EXECUTOR": "ray",
            "RECON_RAY_ADDRESS": "127.0.0.1:6379",
            "RECON_RAY_WAIT_S": "5",
            "RECON_RAY_GIVE_UP_S": "30",
            "RECON_PROGRESS": "plain",
            "RECON_APT_CACHE": "/tmp/apt",
            "HOME": "/nowhere",
        }
    )
    assert found.store_root(tmp_path / "project") == (tmp_path / "s").resolve()
    assert found.sealed == tmp_path / "sealed" and found.verify_reads is False
    assert (found.browsers, found.chromium, found.executor) == (3, "/opt/chromium", "ray")
    assert (found.ray_wait_s, found.ray_give_up_s, found.progress) == (5.0, 30.0, "plain")
    assert found.apt_cache == Path("/tmp/apt")
    assert next(iter(found.forwarded))[0] == "RECON_APT_CACHE"
    assert "HOME" not in dict(found.forwarded)


def test_defaults_and_the_one_store_default(tmp_path: Path) -> None:
    found = Settings.from_env({"RECON_STORE": ""})  # empty is unset
    assert found == Settings(forwarded=(("RECON_STORE", ""),))
    root = tmp_path / "project"
    assert found.store_root(root) == root.resolve() / "store"  # never the current folder
    assert found.deps_root(found.store_root(root)) == StoreLayout(root / "store").deps
    assert found.apt_cache == Path("/var/cache/recon") and found.verify_reads
    project = Project.open(root, found)
    assert project.store_root == root / "store" and project.layout.root == project.store_root


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("RECON_RAY_WAIT_S", "soon"),
        ("RECON_RAY_GIVE_UP_S", "-1"),
        ("RECON_BROWSERS", "many"),
        ("RECON_EXECUTOR", "cloud"),
        ("RECON_PROGRESS", "loud"),
        ("RECON_VERIFY_ON_READ", "no"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable(name: str, value: str) -> None:
    with pytest.raises(ConfigError) as err:
        Settings.from_env({name: value})
    message = str(err.value)
    assert message.startswith(f"{name}={value}: ") and "\n" not in message
    assert re.search(r"set|choose", message), message  # says the fix
    assert err.value.exit_code == EXIT_BAD_INPUT


def test_a_bad_value_exits_2_from_the_command_line(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "RECON_RAY_WAIT_S": "soon"}
    done = subprocess.run(
        [sys.executable, "-m", "recon", "--root", str(REPO), "status", "demo"],
        env=env, capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "recon: RECON_RAY_WAIT_S=soon: not a number of seconds between 0 and 604800; "
        "set one or unset it"
    ]


POISON = """
import collections.abc, os, pkgutil, importlib, sys
read = []
class Poisoned(collections.abc.MutableMapping):
    def __init__(self, data): self.data = dict(data)
    def __getitem__(self, key):
        if key.startswith("RECON_"):
            read.append(key)
        return self.data[key]
    def __setitem__(self, key, value): self.data[key] = value
    def __delitem__(self, key): del self.data[key]
    def __iter__(self): return iter(self.data)
    def __len__(self): return len(self.data)
os.environ = Poisoned({**os.environ, "RECON_STORE": "/poison", "RECON_APT_CACHE": "/poison"})
import recon
skipped = []
for info in pkgutil.walk_packages(recon.__path__, "recon."):
    if info.name == "recon.__main__":  # runs the command line
        continue
    try:
        importlib.import_module(info.name)
    except ImportError as err:  # an optional dependency (ray) that is not installed
        skipped.append(f"{info.name}: {err}")
print(len(read), read, skipped)
sys.exit(1 if read else 0)
"""


def test_importing_every_module_reads_no_setting() -> None:
    done = subprocess.run([sys.executable, "-c", POISON], capture_output=True, text=True,
                          cwd=REPO, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_only_settings_reads_a_recon_variable_from_the_environment() -> None:
    """A source scan: a line naming ``os.environ`` (or ``getenv``) and ``RECON_`` outside
    recon/project/settings.py is a second reader, unless :data:`CONTRACT` says why not."""
    readers = re.compile(r"os\.environ|getenv\(")
    found = {}
    for path in sorted((REPO / "recon").rglob("*.py")):
        rel = path.relative_to(REPO).as_posix()
        if rel == "recon/project/settings.py":
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        hits = [n for n, line in enumerate(lines, 1) if readers.search(line) and "RECON_" in line]
        if hits:
            found[rel] = hits
    assert sorted(found) == sorted(CONTRACT), found


def test_no_other_module_spells_a_store_path() -> None:
    """Every path under the store is named by recon/store/layout.py alone."""
    spelled = re.compile(r"""(store_root|store|root)\s*/\s*["'](state|cells|actions|objects)["']""")
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for path in sorted((REPO / "recon").rglob("*.py"))
        if path.name != "layout.py"
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if spelled.search(line) or '"stat.sqlite"' in line or '"noop.json"' in line
    ]
    assert found == []
