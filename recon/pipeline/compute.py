"""What each cell kind computes. Each function reads its inputs from the store and returns
the refs of what it stored; the runner in ``cells`` handles keys, reuse and pointers."""

from __future__ import annotations

import io
import json
import os
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from recon.curate import compose_workspace, freeze_evidence
from recon.errors import HarnessError
from recon.model import AttemptRecord, Egress, Entry, Ref, ReleaseResult
from recon.pipeline.cells import Cell, Produced, Runtime
from recon.pipeline.matrix import Point
from recon.release.aggregate import Graded, aggregate
from recon.sandbox import (
    CONTAINER_PATHS,
    ENTRY_DIR,
    AttemptRun,
    DockerRun,
    Mount,
    default_recipe,
    ensure_image,
    native_recipe,
    run_docker,
    run_native,
)
from recon.store import checkout_tree, put_files, put_tree, tree_files, tree_reader

PNG = "full.png"


def _blob(rt: Runtime, value: Any) -> Ref:
    return Ref(digest=rt.store.put_json(value), type="blob")


def _tree(digest: str) -> Ref:
    return Ref(digest=digest, type="tree")


def _out(rt: Runtime, cell: Cell, dep: str, name: str) -> str:
    return rt.read_pointer(cell.deps[dep]).outputs[name].digest


def evidence(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    return Produced({"bundle": _tree(inputs["public"])})


def workspace(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    tree = compose_workspace(rt.store, inputs["evidence.bundle"], cell.params["condition"])
    return Produced({"workspace": _tree(tree)})


def image(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    """The native "image" is a description of the host; the docker image is built (or found
    by its recipe tag). The output names the recipe only, so that rebuilding the same recipe
    on another machine never re-keys an attempt; engine image ids go in attempt records."""
    recipe = cell.params["recipe"]
    if recipe.get("kind") != "docker-debootstrap":
        return Produced({"image": _blob(rt, recipe)})
    wanted = default_recipe()
    if wanted.to_json() != recipe:
        raise HarnessError(f"image cell {cell.name}: its recipe is not this harness's recipe")
    built = ensure_image(wanted)
    out = {"recipe": recipe, "digest": wanted.digest, "tag": wanted.tag}
    return Produced({"image": _blob(rt, out)}, timings={"build_s": built.took_s})


def attempt(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    p = cell.params
    project = rt.project
    entry = project.entries[p["entry"]]
    loaded = project.cases[p["case"]]
    protocol = project.release(cell.context["release"]).protocol
    with tempfile.TemporaryDirectory(prefix="recon-attempt-") as tmp:
        work = Path(tmp) / "workspace"
        checkout_tree(rt.store, inputs["workspace.workspace"], work)
        if protocol.backend == "docker":
            sealed = [project.sealed_dir(loaded.id)]
            run: AttemptRun = _docker(
                project.entries_dir,
                entry,
                loaded.contract.build,
                protocol.time_limit_s,
                work,
                Path(tmp) / "build",
                sealed,
            )
        else:
            run = run_native(
                work, entry, project.entries_dir, loaded.contract, protocol.time_limit_s
            )
        build = put_tree(rt.store, run.output) if run.output is not None else None
    extra: dict[str, Any] = {}
    if isinstance(run, DockerRun):
        events = rt.store.put_json(run.egress.get("events", []))
        counts = {k: run.egress.get(k, 0) for k in ("allowed", "refused", "failed")}
        extra = {
            "image_id": run.image_id or None,
            "refusals": run.refusals,
            "egress": Egress(**counts, events=events),
        }
    record = AttemptRecord(
        entry=entry.id,
        case=loaded.id,
        index=p["index"],
        protocol=protocol.name,
        backend=protocol.backend,
        formal=protocol.backend == "docker",
        outcome=run.outcome,
        reason=run.reason,
        exit_code=run.exit_code,
        duration_s=run.duration_s,
        image=inputs["image.image"],
        logs=rt.store.put_bytes(run.logs),
        trace=run.trace,
        **extra,
    )
    outputs = {
        "record": _blob(rt, record.model_dump(mode="json")),
        "logs": Ref(digest=record.logs),
    }
    if build is not None:
        outputs["build"] = _tree(build)
    return Produced(outputs, retry=run.outcome == "harness_failure")


def _docker(
    entries_dir: Path,
    entry: Entry,
    build: Any,
    time_limit_s: int,
    work: Path,
    out: Path,
    sealed: list[Path],
) -> DockerRun:
    """One formal attempt. A missing image is rebuilt (a cache hit when the tag exists);
    engine trouble comes back from ``run_docker`` as a harness failure, retried next build."""
    try:
        tag = ensure_image().tag
    except HarnessError:
        tag = default_recipe().tag  # run_docker reports the engine or image as missing
    command = [part.format(**CONTAINER_PATHS) for part in entry.agent.command]
    env = {name: os.environ[name] for name in entry.agent.env if name in os.environ}
    return run_docker(
        work, command, entry.budget, time_limit_s, tag,
        build=build, out=out, egress=entry.sandbox.egress, env=env,
        secrets=list(env.values()), mounts=[Mount(entries_dir, ENTRY_DIR)], sealed=sealed,
    )  # fmt: skip


def _point(raw: dict[str, Any]) -> Point:
    return Point.from_params(raw)


def _render(rt: Runtime, tree: str, pts: list[Point]) -> tuple[dict[str, bytes], dict[str, float]]:
    from recon.render import Viewport as RenderViewport
    from recon.render import capture

    read = tree_reader(rt.store, tree)
    files: dict[str, bytes] = {}
    timings: dict[str, float] = {}
    for pt in pts:
        vp = RenderViewport(pt.viewport.name, pt.viewport.width, pt.viewport.height)
        job = partial(capture, read=read, route=pt.route, viewport=vp, steps=pt.steps)
        cap = rt.render(job)
        files[f"{pt.id}/{PNG}"] = cap.full_png
        files[f"{pt.id}/viewport.png"] = cap.viewport_png
        files[f"{pt.id}/dom.json"] = _json(cap.dom)
        files[f"{pt.id}/console.json"] = _json(cap.console)
        files[f"{pt.id}/network.json"] = _json([[n.url, n.outcome] for n in cap.network])
        files[f"{pt.id}/status.json"] = _json({"failure": cap.failure})
        timings.update({f"{pt.id}.{k}": round(v, 1) for k, v in cap.timings.items()})
    return files, timings


def _json(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, indent=1).encode()


def oracle(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    files, timings = _render(rt, inputs["reference"], [_point(cell.params["point"])])
    return Produced({"captures": _tree(put_files(rt.store, files))}, timings=timings)


def _valid_build(rt: Runtime, cell: Cell) -> str | None:
    pointer = rt.read_pointer(cell.deps["attempt"])
    record = rt.store.read_json(pointer.outputs["record"].digest)
    if record["outcome"] != "valid":
        return None
    return pointer.outputs["build"].digest


def _skipped(rt: Runtime, name: str, why: str) -> Produced:
    return Produced({name: _blob(rt, {"skipped": why})})


def capture(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    build = _valid_build(rt, cell)
    if build is None:
        return _skipped(rt, "captures", "attempt is not valid")
    files, timings = _render(rt, build, [_point(raw) for raw in cell.params["points"]])
    return Produced({"captures": _tree(put_files(rt.store, files))}, timings=timings)


def probe(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    from recon.render import Check, run_checks
    from recon.render import Viewport as RenderViewport

    build = _valid_build(rt, cell)
    if build is None:
        return _skipped(rt, "results", "attempt is not valid")
    grading = rt.project.cases[cell.params["case"]].grading
    checks = [Check(a.id, dict(a.locator), a.expect, a.value) for a in grading.assertions]
    pt = _point(cell.params["point"])
    vp = RenderViewport(pt.viewport.name, pt.viewport.width, pt.viewport.height)
    read = tree_reader(rt.store, build)
    results = rt.render(lambda browser: run_checks(browser, read, pt.route, vp, checks))
    rows = [{"id": r.id, "passed": r.passed, "observed": r.observed} for r in results]
    return Produced({"results": _blob(rt, {"checks": rows})})


def _png(rt: Runtime, tree: str, point_id: str) -> np.ndarray:
    files = tree_files(rt.store, tree)
    data = rt.store.read_bytes(files[f"{point_id}/{PNG}"].digest)
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def grade(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    from recon.grade import compose, functional, mean
    from recon.grade.global_visual import score as global_visual

    if _valid_build(rt, cell) is None:
        return _skipped(rt, "grade", "attempt is not valid")
    grading = rt.project.cases[cell.params["case"]].grading
    captures = inputs["capture.captures"]
    visual: dict[str, Any] = {}
    for raw in cell.params["points"]:
        pid = _point(raw).id
        result = global_visual(
            _png(rt, captures, pid), _png(rt, inputs[f"oracle.{pid}.captures"], pid)
        )
        visual[pid] = {"score": result.score, "terms": result.terms}
    checks = rt.store.read_json(inputs["probe.results"])["checks"]
    passed = {c["id"]: bool(c["passed"]) for c in checks}
    dims = {
        "global_visual": mean([v["score"] for v in visual.values()]),
        "functional": functional(passed, {a.id: a.weight for a in grading.assertions}),
    }
    composed = compose(dims, {str(k): v for k, v in grading.weights.items()})
    table = {
        "dimensions": dims,
        "arithmetic": composed.arithmetic,
        "total": composed.total,
        "details": {"global_visual": visual, "functional": checks},
    }
    return Produced({"grade": _blob(rt, table)})


def aggregate_cell(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    release = rt.project.release(cell.params["release"])
    graded = []
    for attempt_id in cell.params["attempts"]:
        digest = inputs[f"attempt.{attempt_id}.record"]
        record = AttemptRecord.model_validate(rt.store.read_json(digest))
        table = rt.store.read_json(inputs[f"grade.{attempt_id}.grade"])
        graded.append(Graded(attempt_id, record, digest, None if "skipped" in table else table))
    result = aggregate(release, rt.project.entries, graded)
    return Produced({"release": _blob(rt, result.model_dump(mode="json"))})


def site(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    from recon.site import build_site

    result = ReleaseResult.model_validate(rt.store.read_json(inputs["aggregate.release"]))
    evidence_pngs: dict[str, dict[str, bytes]] = {}
    for case in result.active_cases:
        bundle = tree_files(rt.store, inputs[f"evidence.{case}.bundle"])
        evidence_pngs[case] = {
            path.split("/", 1)[1]: rt.store.read_bytes(f.digest)
            for path, f in bundle.items()
            if path.startswith("evidence/") and path.endswith(".png")
        }
    captures: dict[str, dict[str, bytes]] = {}
    for summary in result.attempts:
        tree = inputs.get(f"capture.{summary.id}.captures")
        if tree is None or summary.outcome != "valid":
            continue
        captures[summary.id] = {
            path.split("/")[0]: rt.store.read_bytes(f.digest)
            for path, f in tree_files(rt.store, tree).items()
            if path.endswith(f"/{PNG}")
        }
    files = build_site(result, evidence_pngs, captures)
    return Produced({"site": _tree(put_files(rt.store, files))})


COMPUTE = {
    "evidence": evidence,
    "workspace": workspace,
    "image": image,
    "attempt": attempt,
    "oracle": oracle,
    "capture": capture,
    "probe": probe,
    "grade": grade,
    "aggregate": aggregate_cell,
    "site": site,
}


def evidence_extra(rt: Runtime, public: Path) -> dict[str, str]:
    return {"public": freeze_evidence(rt.store, public)}


def oracle_extra(rt: Runtime, reference: Path) -> dict[str, str]:
    return {"reference": put_tree(rt.store, reference)}


def image_recipe() -> dict[str, Any]:
    return native_recipe()


def manifest(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    from recon.model import ManifestCell, ManifestInputs
    from recon.release.manifest import build_manifest

    cells = []
    for dep in cell.deps.values():
        pointer = rt.read_pointer(dep)
        cells.append(
            ManifestCell(
                kind=pointer.kind, name=pointer.name, key=pointer.key, outputs=pointer.outputs
            )
        )
    release = cell.params["release"]
    built = build_manifest(
        release,
        ManifestInputs.model_validate(cell.params["inputs"]),
        cells,
        release_json=inputs[f"aggregate:{release}.release"],
        site=inputs[f"site:{release}.site"],
    )
    return Produced({"manifest": _blob(rt, built.model_dump(mode="json"))})


COMPUTE["manifest"] = manifest
