"""The project on disk: cases, entries and release definitions, loaded and cross-checked."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from recon.errors import ConfigError
from recon.gateway.prices import load_prices
from recon.gateway.settings import LiveSettings
from recon.model import Case, Contract, Entry, Grading, Protocol, ReleaseDef, load_yaml
from recon.model.base import shown
from recon.model.calibration import FOLDER as CALIBRATIONS
from recon.model.calibration import Calibration
from recon.model.calibration import path_of as calibration_path
from recon.model.grading import against_contract
from recon.model.matrix import points
from recon.project.settings import Settings
from recon.store import Store, StoreLayout, digest_json


@dataclass(frozen=True)
class LoadedCase:
    case: Case
    folder: Path
    contract: Contract
    grading: Grading
    sealed: Path

    @property
    def id(self) -> str:
        return self.case.id

    @property
    def public(self) -> Path:
        return self.folder / "public"

    @property
    def reference(self) -> Path:
        return self.sealed / "reference"

    @property
    def starter_build(self) -> Path:
        """The starter workspace's build output: the "before" of preservation checks."""
        return self.public / "starter" / self.contract.build.output

    @property
    def grading_file(self) -> Path:
        return self.sealed / "grading.yaml"


def expand_files(entries_dir: Path, item: str) -> list[str]:
    """The files one ``agent.files`` item names under ``entries_dir``, sorted: a glob
    pattern is expanded, a folder (``answers/x/``) stands for every file under it."""
    if _GLOB.search(item):
        matches = sorted(entries_dir.glob(item.rstrip("/")))
    else:
        matches = [entries_dir / item.rstrip("/")]
    files = [f for m in matches for f in ([m] if m.is_file() else _files_under(m, item))]
    return sorted({f.relative_to(entries_dir).as_posix() for f in files})


_GLOB = re.compile(r"[*?\[]")


def _files_under(path: Path, item: str) -> list[Path]:
    """Every file under ``path`` when the item names a folder (a trailing ``/`` or a glob)."""
    if not path.is_dir() or not (item.endswith("/") or _GLOB.search(item)):
        return []
    return sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)


@dataclass
class Project:
    """Everything under one project root. Sealed material may live elsewhere (RECON_SEALED)."""

    root: Path
    store_root: Path
    sealed_root: Path | None = None
    verify_reads: bool = True  # RECON_VERIFY_ON_READ=0 turns it off, to measure its cost only
    live: LiveSettings = field(default_factory=LiveSettings)  # RECON_<VENDOR>_BASE_URL, ...
    settings: Settings = field(default_factory=Settings)  # what the environment set

    @classmethod
    def open(cls, root: Path, settings: Settings) -> Project:
        """The project at ``root``, with the store and sealed folder ``settings`` name."""
        root = Path(root).resolve()
        return cls(
            root=root,
            store_root=settings.store_root(root),
            sealed_root=settings.sealed,
            verify_reads=settings.verify_reads,
            live=settings.live,
            settings=settings,
        )

    @property
    def layout(self) -> StoreLayout:
        return StoreLayout(self.store_root)

    @property
    def deps_root(self) -> Path:
        """The offline dependency stores (``RECON_DEPS``, else ``<store>/deps``)."""
        return self.settings.deps_root(self.store_root)

    def store(self) -> Store:
        """The project's store; whether reads are verified is decided here, once."""
        return Store(self.store_root, verify=self.verify_reads)

    def sealed_dir(self, case_id: str) -> Path:
        if self.sealed_root is not None:
            return self.sealed_root / case_id
        return self.root / "cases" / case_id / "sealed"

    @cached_property
    def cases(self) -> dict[str, LoadedCase]:
        found: dict[str, LoadedCase] = {}
        for path in sorted((self.root / "cases").glob("*/case.yaml")):
            loaded = self.load_case(path)
            found[loaded.id] = loaded
        return found

    def load_case(self, path: Path) -> LoadedCase:
        """One case from its ``case.yaml``, cross-checked; the first problem raises."""
        case = load_yaml(Case, path)
        if case.id != path.parent.name:
            raise ConfigError(
                f"{shown(path)}: id: {case.id!r} does not match its folder "
                f"{path.parent.name!r}; rename one of them"
            )
        sealed = self.sealed_dir(case.id)
        loaded = LoadedCase(
            case=case,
            folder=path.parent,
            contract=load_yaml(Contract, path.parent / "public" / "contract.yaml"),
            grading=load_yaml(Grading, sealed / "grading.yaml"),
            sealed=sealed,
        )
        _cross_check(loaded)
        return loaded

    @cached_property
    def entries(self) -> dict[str, Entry]:
        found: dict[str, Entry] = {}
        for path in sorted((self.root / "entries").glob("*.yaml")):
            entry = load_yaml(Entry, path)
            if entry.id != path.stem:
                raise ConfigError(
                    f"{shown(path)}: id: {entry.id!r} does not match the file name {path.stem!r}; "
                    "rename one of them"
                )
            files = []
            for i, item in enumerate(entry.agent.files):
                named = expand_files(self.entries_dir, item)
                if not named and not _GLOB.search(item) and not item.endswith("/"):
                    self._check_agent_file(path, i, item)  # says what is wrong with it
                if not named:
                    raise ConfigError(
                        f"{shown(path)}: agent.files[{i}]: {item!r} names no file under "
                        "entries/; fix the path or add the file"
                    )
                for rel in named:
                    self._check_agent_file(path, i, rel)
                files += named
            agent = entry.agent.model_copy(update={"files": sorted(set(files))})
            found[entry.id] = entry.model_copy(update={"agent": agent})
        return found

    @property
    def entries_dir(self) -> Path:
        return self.root / "entries"

    def _check_agent_file(self, path: Path, i: int, rel: str) -> None:
        """A file inside entries/, also once symbolic links are followed."""
        where = f"{shown(path)}: agent.files[{i}]"
        file = self.entries_dir / rel
        if not file.is_file():
            raise ConfigError(f"{where}: {rel!r} not found under entries/; add it or fix the path")
        if not file.resolve().is_relative_to(self.entries_dir.resolve()):
            raise ConfigError(
                f"{where}: {rel!r} is a link leading out of entries/; copy the file in instead"
            )

    @cached_property
    def releases(self) -> dict[str, ReleaseDef]:
        found: dict[str, ReleaseDef] = {}
        protocols: dict[str, tuple[Path, Protocol]] = {}
        for path in sorted((self.root / "releases").glob("*.yaml")):
            release = load_yaml(ReleaseDef, path)
            if release.id != path.stem:
                raise ConfigError(
                    f"{shown(path)}: id: {release.id!r} does not match the file name {path.stem!r}"
                )
            self._check_refs(path, release)
            seen = protocols.setdefault(release.protocol.name, (path, release.protocol))
            if seen[1] != release.protocol:
                raise ConfigError(
                    f"{shown(path)}: protocol: {release.protocol.name!r} is defined differently in "
                    f"{shown(seen[0])}; give the changed protocol a new name"
                )
            found[release.id] = release
        return found

    def _check_refs(self, path: Path, release: ReleaseDef) -> None:
        if release.id == CALIBRATIONS.name:
            raise ConfigError(
                f"{shown(path)}: id: {release.id!r} is the folder of calibrations "
                f"({CALIBRATIONS}); give the release another id"
            )
        if release.calibration is not None:
            self._check_calibration(path, release.calibration)
        for label, ids, known in (
            ("cases", release.cases, self.cases),
            ("entries", release.entries, self.entries),
        ):
            for i, ident in enumerate(ids):
                if ident not in known:
                    folder = (
                        f"cases/{ident}/case.yaml" if label == "cases" else f"entries/{ident}.yaml"
                    )
                    raise ConfigError(
                        f"{shown(path)}: {label}[{i}]: unknown "
                        f"{label[:-1].replace('entrie', 'entry')} {ident!r} "
                        f"(known: {', '.join(sorted(known)) or 'none'}); "
                        f"add {folder} or fix the id"
                    )
            if len(set(ids)) != len(ids):
                raise ConfigError(f"{shown(path)}: {label}: listed twice: {sorted(ids)}")
        for ident in release.entries:
            entry = self.entries[ident]
            if release.protocol.formal and entry.sandbox.backend == "native":
                raise ConfigError(
                    f"{shown(path)}: entries: {ident!r} runs on the native backend, which a formal "
                    "release refuses; pin a docker sandbox in its entry"
                )

    def _check_calibration(self, path: Path, calibration: str) -> None:
        """The named calibration exists and loads (its weights and thresholds are sealed:
        never shown)."""
        file = calibration_path(self.root, calibration)
        if not file.is_file():
            raise ConfigError(
                f"{shown(path)}: calibration: no {shown(file)}; fit one with "
                f"`recon calibrate fit <prefs.jsonl> --id {calibration}` or fix the id"
            )
        load_yaml(Calibration, file)

    def release(self, release_id: str) -> ReleaseDef:
        try:
            return self.releases[release_id]
        except KeyError:
            known = ", ".join(sorted(self.releases)) or "none"
            raise ConfigError(
                f"releases/{release_id}.yaml: no such release (known: {known})"
            ) from None

    def protocol_digest(self, protocol: Protocol) -> str:
        return digest_json(protocol.model_dump(mode="json"))

    def validate(self) -> None:
        """Load everything; the first problem raises a ConfigError."""
        _ = self.cases, self.entries, self.releases
        if any(entry.agent.gateway for entry in self.entries.values()):
            load_prices()  # what gateway attempts are metered against


def _cross_check(case: LoadedCase) -> None:
    """What no single file can check: the sealed checks against the public contract, and
    one matrix point id per route × viewport × state."""
    problems = against_contract(case.grading, case.contract)
    if problems:
        raise ConfigError(f"{shown(case.grading_file)}: {problems[0]}")
    ids = [p.id for p in points(case.contract)]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ConfigError(
            f"{shown(case.folder / 'public' / 'contract.yaml')}: routes: two routes give the "
            f"same matrix point {twice[0]!r} ('/' is point 'root', '/a/b' is 'a~b'); rename one"
        )
