"""A release definition turned into its DAG of cells (DESIGN §4)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recon.errors import ConfigError
from recon.gateway.prices import prices_digest
from recon.model import ReleaseDef
from recon.model.calibration import FOLDER as CALIBRATIONS
from recon.model.calibration import path_of as calibration_path
from recon.model.kinds import BUILD_ONLY
from recon.model.matrix import points
from recon.pipeline.keys import KIND_MODULES, Codes
from recon.pipeline.runtime import Cell, walk
from recon.project.loader import LoadedCase, Project
from recon.release.withdrawals import active_digest
from recon.release.withdrawals import path_of as withdrawals_path
from recon.sandbox import default_recipe, native_recipe
from recon.store import StatCache, digest_json

"""What render, probe and grade cells read of an attempt: its build (present only when
the attempt is valid), never its record, so they are keyed on content (DESIGN §4)."""


def _point_params(case: LoadedCase) -> list[dict[str, Any]]:
    return [p.params() for p in points(case.contract)]


class Graph:
    """Builds cells once per name, so releases that share cells share them in doit too."""

    def __init__(self, project: Project, stat: StatCache, codes: Codes) -> None:
        self.project = project
        self.stat = stat
        self.codes = codes
        self.cells: dict[str, Cell] = {}
        self.files: dict[str, list[str]] = {}  # cell id -> source files it reads
        self.versions: dict[str, int] = {}  # release id -> its manifest version (frozen ones)
        # What one derivation asks again and again (a folder's files, an entry's digest, the
        # image recipe): the same answer each time within one process, computed once.
        self._trees: dict[Path, list[str]] = {}
        self._entries: dict[str, str] = {}
        self._images: dict[str, Cell] = {}

    def _tree(self, root: Path) -> list[str]:
        """Every file under ``root``, sorted, as strings."""
        if root not in self._trees:
            self._trees[root] = [str(p) for p in sorted(root.rglob("*")) if p.is_file()]
        return self._trees[root]

    def _cell(
        self,
        kind: str,
        name: str,
        params: dict[str, Any],
        deps: dict[str, Cell],
        files: list[str] | None = None,
        context: dict[str, Any] | None = None,
        reads: dict[str, tuple[str, ...]] | None = None,
    ) -> Cell:
        cell = Cell(kind, name, params, deps, context or {}, reads or {})
        known = self.cells.get(cell.id)
        if known is not None:
            return known
        self.cells[cell.id] = cell
        self.files[cell.id] = sorted(files or [])
        return cell

    def _digest(self, path: Any) -> str:
        return self.stat.digest(path)

    def evidence(self, case: LoadedCase) -> Cell:
        files = self._tree(case.public)
        return self._cell(
            "evidence",
            case.id,
            {"case": case.id, "version": case.case.version},
            {},
            [*files, str(case.folder / "case.yaml")],
        )

    def workspace(self, case: LoadedCase, condition: str) -> Cell:
        return self._cell(
            "workspace",
            f"{case.id}.{condition}",
            {"condition": condition},
            {"evidence": self.evidence(case)},
        )

    def image(self, backend: str) -> Cell:
        if backend not in self._images:
            recipe = default_recipe().to_json() if backend == "docker" else native_recipe()
            self._images[backend] = self._cell("image", backend, {"recipe": recipe}, {})
        return self._images[backend]

    def entry_digest(self, entry_id: str) -> str:
        if entry_id not in self._entries:
            entry = self.project.entries[entry_id]
            files = {rel: self._digest(self.project.entries_dir / rel) for rel in entry.agent.files}
            self._entries[entry_id] = digest_json(
                {"entry": entry.model_dump(mode="json"), "files": files}
            )
        return self._entries[entry_id]

    def skill_digest(self, entry_id: str) -> str | None:
        """The digest of the skill and prompt files the agent is given (None: none)."""
        skills = self.project.entries[entry_id].agent.skills
        if not skills:
            return None
        return digest_json({rel: self._digest(self.project.entries_dir / rel) for rel in skills})

    def attempt(self, release: ReleaseDef, entry_id: str, case: LoadedCase, index: int) -> Cell:
        entry = self.project.entries[entry_id]
        name = release.attempt_name(entry_id, case.id, index)
        params = {
            "entry": entry_id,
            "case": case.id,
            "index": index,
            "entry_digest": self.entry_digest(entry_id),
            "protocol": self.project.protocol_digest(release.protocol),
        }
        if entry.agent.gateway:  # the pinned prices: in the key of gateway attempts only
            params["prices"] = prices_digest()
            moved = self.project.live.base_urls.get(entry.model.provider)
            if moved:  # another upstream than the vendor's own: another attempt
                params["upstream"] = moved
        files = [str(self.project.entries_dir / f"{entry_id}.yaml")]
        files += [str(self.project.entries_dir / rel) for rel in entry.agent.files]
        deps = {
            "workspace": self.workspace(case, entry.evidence_condition),
            "image": self.image(entry.sandbox.backend),
        }
        # The protocol is read from this release; any release naming it holds the same one.
        return self._cell("attempt", name, params, deps, files, {"release": release.id})

    def oracle(self, case: LoadedCase, point: dict[str, Any], point_id: str) -> Cell:
        files = self._tree(case.reference)
        params = {"case": case.id, "point": point}
        return self._cell("oracle", f"{case.id}.{point_id}", params, {}, files)

    def _grading(self, case: LoadedCase) -> tuple[str, str]:
        path = str(case.grading_file)
        return path, self._digest(path)

    def _probe(self, name: str, case: LoadedCase, deps: dict[str, Cell], **more: Any) -> Cell:
        grading, gdigest = self._grading(case)
        plan = {
            "route": case.contract.routes[0],
            "viewports": [vp.model_dump(mode="json") for vp in case.contract.viewports],
        }
        params = {"case": case.id, "plan": plan, "grading": gdigest}
        files = [grading, *more.pop("files", [])]
        return self._cell("probe", name, {**params, **more}, deps, files, reads=BUILD_ONLY)

    def baseline(self, case: LoadedCase, which: str) -> dict[str, Cell]:
        """The reference's or the starter's own probe (and the starter's captures): what
        an attempt is compared with, rendered once per case. Their trees come in as the
        cell's extra input ``build`` (see :meth:`Pipeline._extra`)."""
        root = case.reference if which == "reference" else case.starter_build
        files = self._tree(root)
        cells = {f"{which}-probe": self._probe(f"{case.id}.{which}", case, {}, build=which,
                                              files=files)}  # fmt: skip
        if which == "starter":
            params = {"points": _point_params(case), "build": which}
            cells["starter-capture"] = self._cell(
                "capture", f"{case.id}.starter", {**params, "case": case.id}, {}, files
            )
        return cells

    def calibration(self, release: ReleaseDef) -> dict[str, str] | None:
        """The release's named calibration (``releases/calibrations/<id>.yaml``): its id
        and digest, a parameter of every grade cell of the release (None: none named)."""
        if release.calibration is None:
            return None
        path = calibration_path(self.project.root, release.calibration)
        if not path.is_file():
            raise ConfigError(
                f"releases/{release.id}.yaml: calibration: no {CALIBRATIONS}/"
                f"{release.calibration}.yaml; fit it with `recon calibrate fit` or fix the id"
            )
        return {"id": release.calibration, "digest": self._digest(path)}

    def graded(
        self, attempt: Cell, case: LoadedCase, calibration: dict[str, str] | None = None
    ) -> tuple[Cell, Cell]:
        """The attempt's capture and grade cells. A calibrated grade is its own cell
        (``<attempt>~<calibration>``): releases sharing a protocol may differ in it."""
        pts = _point_params(case)
        grading, gdigest = self._grading(case)
        params: dict[str, Any] = {"case": case.id, "points": pts, "grading": gdigest}
        files = [grading]
        name = attempt.name
        if calibration is not None:
            params["calibration"] = calibration
            files.append(str(calibration_path(self.project.root, calibration["id"])))
            name = f"{attempt.name}~{calibration['id']}"
        capture = self._cell(
            "capture", attempt.name, {"points": pts}, {"attempt": attempt}, reads=BUILD_ONLY
        )
        probe = self._probe(attempt.name, case, {"attempt": attempt})
        oracles = {}
        for raw, pt in zip(pts, points(case.contract), strict=True):
            oracles[f"oracle.{pt.id}"] = self.oracle(case, raw, pt.id)
        grade = self._cell(
            "grade",
            name,
            params,
            {
                "attempt": attempt,
                "capture": capture,
                "probe": probe,
                "evidence": self.evidence(case),
                **oracles,
                **self.baseline(case, "reference"),
                **self.baseline(case, "starter"),
            },
            files,
            reads=BUILD_ONLY,
        )
        return capture, grade

    def release(self, release: ReleaseDef) -> Cell:
        """The manifest cell of a release; every other cell of it is upstream."""
        attempts: dict[str, Cell] = {}
        grades: dict[str, Cell] = {}
        captures: dict[str, Cell] = {}
        calibration = self.calibration(release)
        for case_id in release.cases:
            case = self.project.cases[case_id]
            for entry_id in release.entries:
                for index in range(release.protocol.repeats):
                    cell = self.attempt(release, entry_id, case, index)
                    attempts[cell.name] = cell
                    captures[cell.name], grades[cell.name] = self.graded(cell, case, calibration)
        backends = self._backends(release)
        withdrawals = withdrawals_path(self.project.root, release.id)
        agg = self._cell(
            "aggregate",
            release.id,
            {
                "release": release.id,
                "attempts": sorted(attempts),
                "definition": digest_json(release.model_dump(mode="json")),
                "protocol": self.project.protocol_digest(release.protocol),
                "backends": backends,
                "entries": {
                    e: {"digest": self.entry_digest(e), "skills": self.skill_digest(e)}
                    for e in release.entries
                },
            },
            {
                **{f"attempt.{k}": v for k, v in attempts.items()},
                **{f"grade.{k}": v for k, v in grades.items()},
                **{f"image.{b}": self.image(b) for b in backends},
            },
            [str(withdrawals)] if withdrawals.is_file() else [],
        )
        evidence = {f"evidence.{c}": self.evidence(self.project.cases[c]) for c in release.cases}
        probes = {f"probe.{k}": self.cells[f"probe:{k}"] for k in attempts}
        site = self._cell(
            "site",
            release.id,
            {"release": release.id},
            {
                "aggregate": agg,
                **evidence,
                **{f"capture.{k}": v for k, v in captures.items()},
                **probes,
            },
            self._case_facts(release),
            reads={label: ("checkpoints",) for label in probes},
        )
        upstream = self._upstream([site])
        params: dict[str, Any] = {"release": release.id, "inputs": self.manifest_inputs(release)}
        params["version"] = self.versions.get(release.id, 1)
        return self._cell("manifest", release.id, params, {c.id: c for c in upstream})

    def _case_facts(self, release: ReleaseDef) -> list[str]:
        """The files the site reads the public facts of each case from."""
        folders = [self.project.cases[c].folder for c in release.cases]
        found = [f / name for f in folders for name in ("case.yaml", "provenance.yaml")]
        return [str(p) for p in found if p.is_file()]

    def _backends(self, release: ReleaseDef) -> list[str]:
        return sorted({self.project.entries[e].sandbox.backend for e in release.entries})

    def _upstream(self, roots: list[Cell]) -> list[Cell]:
        return list(walk(roots))

    def manifest_inputs(self, release: ReleaseDef) -> dict[str, Any]:
        cases = {}
        for case_id in release.cases:
            case = self.project.cases[case_id]
            cases[case_id] = {
                "version": str(case.case.version),
                "case": self._digest(case.folder / "case.yaml"),
                "grading": self._digest(case.grading_file),
                **_grading_parts(case),
                "reference": digest_json(
                    {
                        str(p.relative_to(case.reference)): self._digest(p)
                        for p in sorted(case.reference.rglob("*"))
                        if p.is_file()
                    }
                ),
                "public": digest_json(
                    {
                        str(p.relative_to(case.public)): self._digest(p)
                        for p in sorted(case.public.rglob("*"))
                        if p.is_file()
                    }
                ),
            }
        codes = {kind: self.codes.code(kind) for kind in KIND_MODULES}
        return {
            "cases": cases,
            "entries": {e: self.entry_digest(e) for e in release.entries},
            "protocol": self.project.protocol_digest(release.protocol),
            "code": {kind: code.digest for kind, code in codes.items()},
            "toolchain": self.codes.toolchain(),
            "definition": digest_json(release.model_dump(mode="json")),
            "withdrawals": active_digest(self.project.root, release.id),
            **({"calibration": c["digest"]} if (c := self.calibration(release)) else {}),
            "images": {
                b: digest_json(self.image(b).params["recipe"]) for b in self._backends(release)
            },
            "sources": {
                kind: digest_json({"modules": code.modules, "data": code.data})
                for kind, code in codes.items()
            },
            "tools": {kind: sorted(code.toolchain) for kind, code in codes.items()},
        }


def _grading_parts(case: LoadedCase) -> dict[str, str]:
    """The sealed checks' digest, and the calibration's (weights and thresholds) salted with
    the checks, so that it moves with the calibration alone yet cannot be matched against
    guessed weights by anyone who does not hold the sealed checks."""
    checks = case.grading.model_dump(mode="json", exclude={"weights", "thresholds"})
    calibration = case.grading.model_dump(mode="json", include={"weights", "thresholds"})
    return {
        "checks": digest_json(checks),
        "calibration": digest_json({"calibration": calibration, "salt": checks}),
    }
