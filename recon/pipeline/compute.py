"""What each cell kind computes. Each function reads its inputs from the store and returns
the refs of what it stored; the runner in ``cells`` handles keys, reuse and pointers."""

from __future__ import annotations

import json
import os
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from recon.agents import CommandAdapter, not_started
from recon.curate import compose_workspace, freeze_evidence
from recon.errors import HarnessError
from recon.model import AttemptRecord, Egress, Entry, Ref, ReleaseResult, Viewport
from recon.model.contract import VIEWPORTS
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
from recon.sandbox.deps import require as require_deps
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
    # Credentials are checked before anything starts: missing ones are the harness's failure.
    missing = CommandAdapter(entry.agent).credentials_reason(entry.id, os.environ)
    with tempfile.TemporaryDirectory(prefix="recon-attempt-") as tmp:
        work = Path(tmp) / "workspace"
        checkout_tree(rt.store, inputs["workspace.workspace"], work)
        run: AttemptRun
        if missing is not None:
            run = not_started(missing)
        elif protocol.backend == "docker":
            sealed = [project.sealed_dir(loaded.id)]
            run = _docker(
                project.entries_dir,
                entry,
                loaded.contract.build,
                protocol.time_limit_s,
                work,
                Path(tmp) / "build",
                sealed,
                project.store_root,
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
    store_root: Path,
) -> AttemptRun:
    """One formal attempt. A missing image is rebuilt (a cache hit when the tag exists);
    engine trouble comes back from ``run_docker`` as a harness failure, retried next build.
    The offline dependency store must have been fetched (``recon deps fetch``)."""
    try:
        deps = require_deps(store_root)
    except HarnessError as err:
        return not_started(f"harness: {err}")
    try:
        tag = ensure_image().tag
    except HarnessError:
        tag = default_recipe().tag  # run_docker reports the engine or image as missing
    adapter = CommandAdapter(entry.agent)
    agent = adapter.prepare(CONTAINER_PATHS, os.environ)
    run = run_docker(
        work, agent.command, entry.budget, time_limit_s, tag,
        build=build, out=out, egress=entry.sandbox.egress, env=agent.env,
        secrets=agent.secrets, mounts=[Mount(entries_dir, ENTRY_DIR)], sealed=sealed,
        deps=deps, trace_file=agent.trace_file,
    )  # fmt: skip
    run.trace = adapter.trace(run.logs, run.trace_file)
    return run


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


def _build(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> str | None:
    """The tree to render: the reference's or the starter's (given as an extra input),
    or the attempt's build when the attempt is valid (None otherwise)."""
    if "build" in inputs:
        return inputs["build"]
    pointer = rt.read_pointer(cell.deps["attempt"])
    record = rt.store.read_json(pointer.outputs["record"].digest)
    if record["outcome"] != "valid":
        return None
    return pointer.outputs["build"].digest


def _skipped(rt: Runtime, name: str, why: str) -> Produced:
    return Produced({name: _blob(rt, {"skipped": why})})


def capture(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    build = _build(rt, cell, inputs)
    if build is None:
        return _skipped(rt, "captures", "attempt is not valid")
    files, timings = _render(rt, build, [_point(raw) for raw in cell.params["points"]])
    return Produced({"captures": _tree(put_files(rt.store, files))}, timings=timings)


def probe(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    """Sealed assertions at every contract viewport (the route's default state), the
    preservation checks at the first viewport, and every workflow with its checkpoints."""
    from recon.render import Viewport as RenderViewport
    from recon.render import run_checks, run_workflow

    build = _build(rt, cell, inputs)
    if build is None:
        return _skipped(rt, "results", "attempt is not valid")
    grading = rt.project.cases[cell.params["case"]].grading
    plan = cell.params["plan"]
    read = tree_reader(rt.store, build)
    viewports = [Viewport.model_validate(v) for v in plan["viewports"]]

    def render_viewport(vp: Viewport) -> RenderViewport:
        return RenderViewport(vp.name, vp.width, vp.height)

    assertions: dict[str, list[dict[str, Any]]] = {}
    for i, vp in enumerate(viewports):
        checks = list(grading.assertions)
        if i == 0:
            checks += grading.preservation.assertions
        job = partial(
            run_checks, read=read, route=plan["route"], viewport=render_viewport(vp),
            assertions=checks,
        )  # fmt: skip
        assertions[vp.name] = [r.row() for r in rt.render(job)]
    first = viewports[0].name
    protected = {a.id for a in grading.preservation.assertions}
    results: dict[str, Any] = {
        "assertions": {
            name: [r for r in rows if r["id"] not in protected or name != first]
            for name, rows in assertions.items()
        },
        "preservation": [r for r in assertions[first] if r["id"] in protected],
        "workflows": {},
        "failures": {},
    }
    shots: dict[str, bytes] = {}
    for wf in grading.workflows:
        vp = VIEWPORTS[wf.viewport]
        run = rt.render(partial(run_workflow, read=read, workflow=wf, viewport=render_viewport(vp)))
        results["workflows"].update(run.rows)
        if run.failure is not None:
            results["failures"][wf.id] = run.failure
        shots.update({f"{k}.png": png for k, png in run.screenshots.items() if png})
    outputs = {"results": _blob(rt, results), "checkpoints": _tree(put_files(rt.store, shots))}
    return Produced(outputs)


def _files(rt: Runtime, tree: str) -> dict[str, bytes]:
    return {path: rt.store.read_bytes(f.digest) for path, f in tree_files(rt.store, tree).items()}


def _views(rt: Runtime, tree: str, points: list[Point]) -> dict[str, Any]:
    from recon.grade.attempt import View, decode_png

    files = tree_files(rt.store, tree)

    def read(pid: str, name: str) -> bytes:
        ref = files.get(f"{pid}/{name}")
        return rt.store.read_bytes(ref.digest) if ref is not None else b""

    views = {}
    for pt in points:
        status = json.loads(read(pt.id, "status.json") or b"{}")
        image = decode_png(read(pt.id, PNG))
        failure = status.get("failure") or (None if image is not None else "no screenshot")
        views[pt.id] = View(
            point=pt.id,
            route=pt.route,
            viewport=pt.viewport.name,
            width=pt.viewport.width,
            height=pt.viewport.height,
            state=pt.state,
            image=None if failure else image,
            dom=json.loads(read(pt.id, "dom.json") or b"[]"),
            network=json.loads(read(pt.id, "network.json") or b"[]"),
            failure=failure,
        )
    return views


def _probed(rt: Runtime, results: str, checkpoints: str) -> Any:
    from recon.grade.attempt import Probed, decode_png

    raw = rt.store.read_json(results)
    shots = {}
    for path, data in _files(rt, checkpoints).items():
        image = decode_png(data)
        if image is not None:
            shots[path.removesuffix(".png")] = image
    return Probed(
        assertions=raw["assertions"],
        preservation=raw["preservation"],
        workflows=raw["workflows"],
        screenshots=shots,
        failures=raw["failures"],
    )


def _served(rt: Runtime, build: str, views: dict[str, Any]) -> dict[str, bytes]:
    """The bytes the page was served, by URL (from the capture's network logs)."""
    from urllib.parse import urlsplit

    from recon.render.serve import build_path

    files = tree_files(rt.store, build)
    served: dict[str, bytes] = {}
    for view in views.values():
        for url, outcome in view.network:
            ref = files.get(build_path(urlsplit(url).path))
            if outcome == "served" and ref is not None and url not in served:
                served[url] = rt.store.read_bytes(ref.digest)
    return served


def _evidence(rt: Runtime, bundle: str) -> dict[str, np.ndarray]:
    from recon.grade.attempt import decode_png

    found = {}
    for path, f in tree_files(rt.store, bundle).items():
        parts = path.split("/")
        if len(parts) == 2 and parts[0] == "evidence" and parts[1].endswith(".png"):
            image = decode_png(rt.store.read_bytes(f.digest))
            if image is not None:
                found[parts[1]] = image
    return found


def grade(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    from recon.grade.attempt import Build
    from recon.grade.attempt import grade as grade_attempt

    build = _build(rt, cell, inputs)
    if build is None:
        return _skipped(rt, "grade", "attempt is not valid")
    loaded = rt.project.cases[cell.params["case"]]
    pts = [_point(raw) for raw in cell.params["points"]]
    reference_views: dict[str, Any] = {}
    for pt in pts:
        reference_views.update(_views(rt, inputs[f"oracle.{pt.id}.captures"], [pt]))
    candidate_views = _views(rt, inputs["capture.captures"], pts)

    def probed(dep: str) -> Any:
        return _probed(rt, inputs[f"{dep}.results"], inputs[f"{dep}.checkpoints"])

    table = grade_attempt(
        loaded.grading,
        Build(candidate_views, probed("probe")),
        Build(reference_views, probed("reference-probe")),
        Build(_views(rt, inputs["starter-capture.captures"], pts), probed("starter-probe")),
        first_viewport=pts[0].viewport.name,
        evidence=_evidence(rt, inputs["evidence.bundle"]),
        served=_served(rt, build, candidate_views),
    )
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


def build_extra(rt: Runtime, root: Path) -> dict[str, str]:
    """A case's own build (reference or starter) as the ``build`` input; a starter with
    no output folder is an empty build (every route of it is missing)."""
    tree = put_tree(rt.store, root) if root.is_dir() else put_files(rt.store, {})
    return {"build": tree}


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
