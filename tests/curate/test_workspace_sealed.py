"""No Candidate workspace of any case holds a sealed byte (issue 13).

Every case under ``cases/`` (not only the demo's: nothing here renders), under each of its
evidence conditions, has its workspace composed by the code the workspace cell runs
(:func:`recon.curate.bundle.freeze_evidence`, :func:`~recon.curate.bundle.compose_workspace`)
into a scratch store, and every file of the tree is scanned:

- **blobs**: no file's digest is the digest of a file under ``sealed/`` (``grading.yaml``, the
  reference), unless the case publishes that same file in ``public/`` (a repair case's
  starter is the reference with seeded defects: its untouched files, vendored libraries
  and images are public by the curator's declaration);
- **windows**: no 32-byte window of a sealed text file appears, unless the same window is
  in the case's committed ``public/`` folder;
- **authored**: no run of :data:`RUN` bytes or more of ``grading.yaml`` or of a reference
  file that provenance marks as authored for ReconBench (an extension case's answer, say)
  appears in the workspace, whether ``public/`` has it or not. The first two rules prove
  the harness adds nothing sealed; this one that the curator published none of the answer.
  Shorter shared runs are public by nature: a locator the contract's steps also use, a
  sentence the brief quotes, the HTML5 skeleton (the longest on the suite: 168 bytes).

Windows of fewer than 4 distinct bytes (padding runs) are left out.

Each rule is shown to find a planted leak, so the clean result is not vacuous.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from recon.curate.bundle import compose_workspace, freeze_evidence
from recon.model import Provenance, load_yaml
from recon.project.loader import LoadedCase, Project
from recon.project.settings import Settings
from recon.store import Store, tree_files
from recon.store.objects import hash_file
from tests.conftest import REPO
from tests.site.leaks import TEXT as SITE_TEXT
from tests.site.leaks import WINDOW, _hashes

RUN = 256
TEXT = (*SITE_TEXT, ".htm", ".mjs", ".yaml", ".yml", ".svg")
PROJECT = Project.open(REPO, Settings.from_env())
CASES = sorted(PROJECT.cases)


def _windows(data: bytes) -> np.ndarray:
    """The distinct window hashes of ``data``, padding runs left out."""
    hashes = _hashes(data)
    if not len(hashes):
        return hashes
    view = np.lib.stride_tricks.sliding_window_view(np.frombuffer(data, np.uint8), WINDOW)
    distinct = (np.diff(np.sort(view, axis=1), axis=1) != 0).sum(axis=1) + 1
    return np.unique(hashes[distinct >= 4])


@dataclass
class Secrets:
    blobs: dict[str, str]  # digest -> sealed path
    windows: list[tuple[str, np.ndarray]]  # sealed text: (path, its window hashes not in public/)
    authored: list[tuple[str, np.ndarray]]  # authored sealed text: (path, window hashes in order)

    every_window: np.ndarray = field(init=False)  # all of ``windows``, to test a file once

    def __post_init__(self) -> None:
        tables = [table for _, table in self.windows]
        self.every_window = np.concatenate(tables) if tables else np.zeros(0, np.uint64)


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def _authored(case: LoadedCase) -> set[Path]:
    provenance = load_yaml(Provenance, case.folder / "provenance.yaml")
    found = {case.grading_file}
    for artifact in provenance.artifacts:
        if artifact.authored and artifact.path.startswith("sealed/"):
            found.add(case.sealed / artifact.path.removeprefix("sealed/"))
    return found


def secrets_of(case: LoadedCase, public_dir: Path | None = None) -> Secrets:
    """The case's sealed material; what ``public_dir`` (default: the case's public/)
    holds is declared public."""
    public = _files(public_dir or case.public)
    public_digests = {hash_file(p) for p in public}
    public_windows = np.unique(
        np.concatenate([_windows(p.read_bytes()) for p in public if p.suffix.lower() in TEXT])
    )
    authored = _authored(case)
    blobs: dict[str, str] = {}
    windows: list[tuple[str, np.ndarray]] = []
    own: list[tuple[str, np.ndarray]] = []
    for path in _files(case.sealed):
        where = path.relative_to(case.folder).as_posix()
        digest = hash_file(path)
        if path in authored or digest not in public_digests:
            blobs[digest] = where
        if path.suffix.lower() not in TEXT:
            continue
        data = path.read_bytes()
        windows.append((where, np.setdiff1d(_windows(data), public_windows, assume_unique=True)))
        if path in authored:
            own.append((where, _hashes(data)))
    return Secrets(blobs, windows, own)


def leaks(store: Store, workspace: str, secrets: Secrets) -> list[str]:
    """Every sealed blob or window in the workspace tree, one line each."""
    found = []
    for path, file in sorted(tree_files(store, workspace).items()):
        if file.digest in secrets.blobs:
            found.append(f"{path}: is sealed {secrets.blobs[file.digest]}")
            continue
        present = _in(np.sort(_hashes(store.read_bytes(file.digest))))
        if present(secrets.every_window).any():  # which files: only when there is a leak
            for where, table in secrets.windows:
                hit = int(present(table).sum())
                if hit:
                    found.append(f"{path}: holds {hit} 32-byte windows of {where}")
        for where, ordered in secrets.authored:
            run = _longest_run(present(ordered))
            if run + WINDOW - 1 >= RUN:
                found.append(f"{path}: holds {run + WINDOW - 1} bytes in a row of {where}")
    return found


def _in(sorted_hashes: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """Which of some hashes are among ``sorted_hashes`` (a file's windows, sorted once)."""

    def present(wanted: np.ndarray) -> np.ndarray:
        if not len(sorted_hashes):
            return np.zeros(len(wanted), dtype=bool)
        at = np.minimum(np.searchsorted(sorted_hashes, wanted), len(sorted_hashes) - 1)
        return sorted_hashes[at] == wanted

    return present


def _longest_run(marked: np.ndarray) -> int:
    """The longest run of True in ``marked``."""
    if not marked.any():
        return 0
    edges = np.diff(np.concatenate([[0], marked.astype(np.int8), [0]]))
    return int((np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)).max())


def _workspaces(case: LoadedCase, public: Path, store: Store) -> dict[str, str]:
    bundle = freeze_evidence(store, public)
    return {c: compose_workspace(store, bundle, c) for c in case.case.evidence_conditions}


@pytest.mark.parametrize("case_id", CASES)
def test_no_workspace_of_any_case_holds_a_sealed_byte(case_id: str, tmp_path: Path) -> None:
    case = PROJECT.cases[case_id]
    secrets = secrets_of(case)
    assert secrets.blobs and secrets.authored, "no sealed material found: the scan is vacuous"
    store = Store(tmp_path / "store")
    workspaces = _workspaces(case, case.public, store)
    assert workspaces, f"{case_id} declares no evidence condition"
    for condition, workspace in workspaces.items():
        assert tree_files(store, workspace), f"{case_id} {condition}: empty workspace"
        assert leaks(store, workspace, secrets) == [], f"{case_id} under {condition}"


def _secret_slice(data: bytes, table: np.ndarray, size: int = 48) -> bytes:
    """The first ``size`` bytes of ``data`` whose every window is in ``table``."""
    marked = np.isin(_hashes(data), table)
    need = size - WINDOW + 1
    for start in np.flatnonzero(marked):
        if marked[start : start + need].all() and start + need <= len(marked):
            return data[start : start + size]
    raise AssertionError("no secret slice: nothing of this file is sealed-only")


@pytest.mark.parametrize("case_id", ["resume-dark-mode", "todomvc"])
def test_the_scan_finds_each_kind_of_planted_leak(case_id: str, tmp_path: Path) -> None:
    """Each rule finds its leak: grading.yaml renamed into the starter (blobs), 48 bytes of
    it at the end of the brief (windows), and 300 bytes of an authored reference file in
    the starter, planted in public/ itself, so only the authored rule can see it."""
    case = PROJECT.cases[case_id]
    grading = case.grading_file.read_bytes()
    answer = sorted(p for p in _authored(case) if p != case.grading_file)[0]
    table = dict(secrets_of(case).windows)["sealed/grading.yaml"]
    public = tmp_path / "public"
    shutil.copytree(case.public, public)
    site = public / "starter" / case.contract.build.output
    brief = (public / "brief.md").read_bytes()
    plants = {
        "blob": (site / "notes.bin", grading, "is sealed sealed/grading.yaml"),
        "windows": (
            public / "brief.md",
            brief + _secret_slice(grading, table),
            "windows of sealed/grading.yaml",
        ),
        "authored": (
            site / "extra.js",
            b"// " + answer.read_bytes()[:300],
            "300 bytes in a row of sealed/reference/",
        ),
    }
    for name, (path, data, expected) in plants.items():
        before = path.read_bytes() if path.exists() else None
        path.write_bytes(data)
        # the authored plant is judged against secrets that count the planted public/ as public
        secrets = secrets_of(case, public if name == "authored" else case.public)
        store = Store(tmp_path / f"store-{name}")
        where = (
            path.relative_to(public / "starter").as_posix()
            if "starter" in path.parts
            else path.name
        )
        for condition, workspace in _workspaces(case, public, store).items():
            found = leaks(store, workspace, secrets)
            assert any(x.startswith(f"{where}: ") and expected in x for x in found), (
                name,
                condition,
                found,
            )
            if name == "authored":
                assert not any("windows of" in x for x in found), found
        path.unlink() if before is None else path.write_bytes(before)
