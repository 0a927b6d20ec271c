"""``recon validate``: every problem of the named cases, in one run.

Per case, without a browser:

- every file parses (``case.yaml``, ``public/contract.yaml``, ``sealed/grading.yaml``,
  ``provenance.yaml``) and the sealed checks fit the contract;
- provenance pins the reference: every pinned file exists with its blake3, and every file
  of ``sealed/reference/`` is pinned;
- no public file refers to sealed material: no link into the sealed folder, no mention
  of a sealed path, no byte-for-byte copy of ``grading.yaml`` or of an authored
  reference file;
- the starter builds offline: its build command (if any) runs in an empty network
  namespace and leaves a non-empty output folder.

Then, rendering only these cases (:mod:`recon.curate.discriminate`): the reference is the
fixed point of its grade (:mod:`recon.curate.casecheck`), the committed evidence is what
the reference renders now, every check marked ``discriminates: true`` fails on the
starter, and no preservation check fails on the starter already.

Each problem is one line ``<file>: <field>: <what>; <fix>``; the command prints them all.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from recon.errors import ConfigError, ReconError
from recon.model import load_yaml
from recon.model.base import shown
from recon.model.provenance import Provenance
from recon.project.loader import LoadedCase, Project
from recon.store import hash_file

BUILD_LIMIT_S = 600.0
PUBLIC_TEXT = (".md", ".yaml", ".yml", ".html", ".htm", ".css", ".js", ".json", ".txt", ".svg")


def validate(project: Project, ids: Sequence[str], *, render: bool = True) -> list[str]:
    """Every problem of the cases ``ids`` (all cases when empty), one line each."""
    found: list[str] = []
    for case_id in ids or sorted(p.parent.name for p in project.root.glob("cases/*/case.yaml")):
        found += case_problems(project, case_id, render=render)
    return found


def case_problems(project: Project, case_id: str, *, render: bool = True) -> list[str]:
    path = project.root / "cases" / case_id / "case.yaml"
    if not path.is_file():
        return [f"{shown(path)}: no such case; check the id or run `recon case new {case_id}`"]
    try:
        case = project.load_case(path)
    except ConfigError as err:  # nothing further can be checked without the files
        return [*str(err).splitlines(), *_provenance(path.parent, project.sealed_dir(case_id))]
    found = [*_provenance(case.folder, case.sealed), *sealed_references(case)]
    with built_starter(case) as (starter, problem):
        if problem:
            found.append(problem)
        if render and starter is not None:
            from recon.curate.discriminate import rendered_problems

            found += rendered_problems(case, starter)
    return found


def check(project: Project, ids: Sequence[str], *, render: bool = True) -> int:
    """Raise one ConfigError listing every problem; the number of cases checked."""
    unknown = [i for i in ids if not (project.root / "cases" / i / "case.yaml").is_file()]
    if unknown:
        known = sorted(p.parent.name for p in project.root.glob("cases/*/case.yaml"))
        raise ConfigError(f"cases/{unknown[0]}/case.yaml: no such case (known: {', '.join(known)})")
    found = validate(project, ids, render=render)
    if found:
        raise ConfigError("\n".join(found))
    return len(ids) or len(list(project.root.glob("cases/*/case.yaml")))


def _provenance(folder: Path, sealed: Path) -> list[str]:
    """provenance.yaml parses and pins exactly the files of the sealed reference."""
    path = folder / "provenance.yaml"
    where = shown(path)
    if not path.is_file():
        return [f"{where}: missing; write where the reference came from (`recon case new`)"]
    try:
        provenance = load_yaml(Provenance, path)
    except ConfigError as err:
        return [str(err)]
    found = []
    pinned = set()
    for i, artifact in enumerate(provenance.artifacts):
        file = _case_path(folder, sealed, artifact.path)
        pinned.add(file.resolve())
        if not file.is_file():
            found.append(f"{where}: artifacts[{i}].path: {artifact.path} does not exist; fix it")
        elif hash_file(file) != artifact.blake3:
            found.append(
                f"{where}: artifacts[{i}].blake3: {artifact.path} has blake3 {hash_file(file)}, "
                f"not the pinned {artifact.blake3}; re-freeze the case or restore the file"
            )
    reference = sealed / "reference"
    for file in sorted(p for p in reference.rglob("*") if p.is_file()):
        if file.resolve() not in pinned:
            rel = file.relative_to(reference).as_posix()
            found.append(
                f"{where}: artifacts: sealed/reference/{rel} is not pinned; add it with its "
                "source and blake3 (`recon case freeze` writes them)"
            )
    return found


def _case_path(folder: Path, sealed: Path, path: str) -> Path:
    """A provenance path (``sealed/reference/x``) in this project (sealed may be elsewhere)."""
    if path.startswith("sealed/"):
        return sealed / path.removeprefix("sealed/")
    return folder / path


def sealed_references(case: LoadedCase) -> list[str]:
    """Public files that link into, name or copy sealed material."""
    sealed = case.sealed.resolve()
    secret = {hash_file(case.grading_file): "sealed/grading.yaml"}
    provenance = case.folder / "provenance.yaml"
    if provenance.is_file():
        try:
            for a in load_yaml(Provenance, provenance).artifacts:
                if a.authored:
                    secret[a.blake3] = a.path
        except ConfigError:
            pass  # reported by _provenance
    found = []
    for file in sorted(case.public.rglob("*")):
        where = shown(file)
        if file.is_symlink() and sealed in [*file.resolve().parents, file.resolve()]:
            found.append(f"{where}: links into the sealed folder; copy public material instead")
            continue
        if not file.is_file():
            continue
        copied = secret.get(hash_file(file))
        if copied is not None:
            found.append(
                f"{where}: is a copy of sealed {copied}, which the Candidate must not see; "
                "remove it from public/"
            )
        elif file.suffix.lower() in PUBLIC_TEXT and _names_sealed(file):
            found.append(
                f"{where}: mentions a sealed path (sealed/, grading.yaml); public material "
                "must not point at sealed files: remove the reference"
            )
    return found


def _names_sealed(file: Path) -> bool:
    text = file.read_bytes()[:1_000_000].decode("utf-8", "replace")
    return "sealed/" in text or "grading.yaml" in text


@contextmanager
def built_starter(case: LoadedCase) -> Iterator[tuple[Path | None, str | None]]:
    """The starter's build output, built offline in a scratch copy when the contract has a
    build command; or the problem that stopped it."""
    build = case.contract.build
    where = f"{shown(case.public / 'contract.yaml')}: build"
    with tempfile.TemporaryDirectory(prefix="recon-starter-") as tmp:
        workspace = Path(tmp) / "workspace"
        shutil.copytree(case.public / "starter", workspace, symlinks=True)
        problem = _run_build(build.command, workspace) if build.command else None
        output = workspace / build.output
        if problem is None and (not output.is_dir() or not any(output.iterdir())):
            problem = f"the starter's build leaves no output in {build.output}/; fix the starter"
        yield (None, f"{where}: {problem}") if problem else (output, None)


def _run_build(command: list[str], workspace: Path) -> str | None:
    """Run the build step in an empty network namespace; its problem, or None."""
    import os

    from recon.render.netns import unshare_prefix
    from recon.sandbox.native_step import Limits, run_step

    try:
        prefix = list(unshare_prefix())
    except ReconError as err:
        return f"cannot build offline here: {err}"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(workspace)}
    env["LANG"] = "C.UTF-8"
    step = run_step(
        [*prefix, *command], workspace, env, BUILD_LIMIT_S, Limits(4 << 30, 1 << 30, 1 << 20)
    )
    if step.code == 0:
        return None
    why = "timed out" if step.code is None else f"exited with status {step.code}"
    tail = step.log.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
    return f"the starter's build command {why} offline ({tail[0][:200]}); fix the starter"
