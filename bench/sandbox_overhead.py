"""Docker backend overhead: one attempt from container create to destroy, with a no-op agent.

Three columns, interleaved, ``--runs`` times each, on the real engine and image:

- ``bare``: ``docker run --rm --network none IMAGE true`` through the SDK (create, start,
  wait, remove): the engine's own floor, the baseline of the ratio;
- ``attempt``: ``recon.sandbox.run_docker`` with an agent that writes one file to the
  output: staging tar, create + start with every limit, workspace unpack, egress proxy and
  bridge, the agent exec, leftover reaping, output extraction, removal;
- ``native``: ``run_native``-equivalent floor for the same no-op (a host subprocess).

Image build: ``cached`` is ``build_image`` finding the tag; ``cold`` is the record the
first build on this machine kept (``/var/cache/recon/images``), or, with ``--cold``, a fresh
build of a recipe variant (same packages, different digest; its image is removed after).

    .venv/bin/python bench/sandbox_overhead.py [--runs 10] [--cold] \
        [--out bench/results/sandbox_overhead.json]

``--flood N`` measures only an output flood instead: an agent writes N empty files (plus
``index.html``) to the output, once under the default budget (``output_files`` 20,000:
refused, in the container, before anything is archived) and once with the cap lifted to
1,000,000 (every file streamed out, unpacked and stored with ``put_tree``, as before the
cap); both in the same run, written to ``sandbox_output_flood.json`` beside ``--out``.
Run it with ``PYTHONPATH=.`` from a checkout, so that it measures that checkout's recon.

A report, not a test: prints a table, writes JSON, asserts no times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import docker

from recon.errors import StoreError
from recon.model import Budget, BuildStep
from recon.project.settings import Settings
from recon.sandbox import ImageRecipe, build_image, engine_client, ensure_engine, run_docker
from recon.sandbox.rootfs import SETUP, cold_build_record, host_arch
from recon.store import Store, put_tree, read_tree
from recon.store.tree import tree_objects

BENCH = Path(__file__).resolve().parent
BUDGET = Budget(cpus=1, memory_mb=512, pids=128, wall_s=60, disk_mb=128, output_mb=1)
NOOP = "mkdir dist && echo ok > dist/index.html"


def bare(client: docker.DockerClient, tag: str) -> float:
    started = time.perf_counter()
    client.containers.run(tag, ["true"], network_mode="none", remove=True)
    return time.perf_counter() - started


def attempt(client: docker.DockerClient, tag: str, tmp: Path, i: int) -> tuple[float, dict]:
    workspace = tmp / f"ws{i}"
    workspace.mkdir()
    (workspace / "brief.md").write_text("no-op\n")
    started = time.perf_counter()
    build = BuildStep(output="dist")
    command = ["sh", "-c", NOOP]
    run = run_docker(
        workspace, command, BUDGET, 60, tag, build=build, out=tmp / f"out{i}", client=client
    )
    took = time.perf_counter() - started
    if run.outcome != "valid":
        raise SystemExit(f"no-op attempt was {run.outcome}: {run.reason}")
    return took, run.timings


def flood(client: docker.DockerClient, tag: str, tmp: Path, files: int) -> dict[str, Any]:
    """The same flood twice, in one run: under the default budget (refused past
    ``output_files``) and with the cap lifted to its maximum (the baseline: what the harness
    did before the cap, extraction and ``put_tree`` of every file)."""
    capped = flood_once(client, tag, tmp / "capped", files, BUDGET)
    lifted = BUDGET.model_copy(update={"output_files": 1_000_000})
    uncapped = flood_once(client, tag, tmp / "uncapped", files, lifted)
    cost = uncapped["phases"].get("extract", 0.0) + uncapped.get("put_tree_s", 0.0)
    return {
        "capped": capped,
        "uncapped": uncapped,
        "uncapped_over_capped": round(cost / max(capped["phases"].get("extract", 0.0), 1e-3), 1),
        "load_average": os.getloadavg(),
    }


def flood_once(
    client: docker.DockerClient, tag: str, tmp: Path, files: int, budget: Budget
) -> dict[str, Any]:
    """One attempt whose output holds ``files`` empty files (plus ``index.html``): what it
    costs from the agent's end to a stored build tree (or to the refusal)."""
    tmp.mkdir()
    workspace = tmp / f"flood{files}"
    workspace.mkdir()
    (workspace / "brief.md").write_text("flood\n")
    script = (
        f"python3 -c \"import os; os.makedirs('dist/a'); "
        f"[open(f'dist/a/f{{i}}', 'w').close() for i in range({files})]\"; "
        "echo hi > dist/index.html"
    )
    started = time.perf_counter()
    run = run_docker(
        workspace, ["sh", "-c", script], budget.model_copy(update={"wall_s": 300}), 300, tag,
        build=BuildStep(output="dist"),
        out=tmp / f"flood-out{files}", client=client,
    )  # fmt: skip
    figures: dict[str, Any] = {
        "files": files + 1,
        "outcome": run.outcome,
        "reason": run.reason,
        "refusals": run.refusals,
        "attempt_s": round(time.perf_counter() - started, 3),
        "phases": run.timings,
    }
    if run.output is not None:
        store = Store(tmp / "store")
        started = time.perf_counter()
        tree = put_tree(store, run.output)
        figures["put_tree_s"] = round(time.perf_counter() - started, 3)
        trees = [d for d in tree_objects(store, tree) if d == tree or _is_tree(store, d)]
        figures["tree_objects_bytes"] = sum(len(store.read_bytes(d)) for d in trees)
    return figures


def _is_tree(store: Store, digest: str) -> bool:
    try:
        read_tree(store, digest)
    except StoreError:
        return False
    return True


def native(tmp: Path, i: int) -> float:
    workspace = tmp / f"native{i}"
    workspace.mkdir()
    started = time.perf_counter()
    subprocess.run(["sh", "-c", NOOP], cwd=workspace, check=True)
    return time.perf_counter() - started


def summary(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def image_figures(client: docker.DockerClient, cold: bool, workdir: Path) -> dict[str, Any]:
    recipe = ImageRecipe(arch=host_arch())
    settings = Settings.from_env()
    where = {
        "deps_root": settings.deps_root(settings.store_root(BENCH.parent)),
        "cache_dir": settings.apt_cache,
    }
    hit = build_image(recipe, workdir, client, **where)
    figures: dict[str, Any] = {"tag": recipe.tag, "cached_s": hit.took_s}
    record = cold_build_record(recipe, settings.apt_cache)
    if cold:
        variant = ImageRecipe(arch=host_arch(), setup=SETUP + "# bench: cold build variant\n")
        built = build_image(variant, workdir, client, **where)
        client.images.remove(built.image_id, force=True)
        record = built.to_json()
    if record is not None:
        figures["cold_s"] = record["took_s"]
        figures["cold_timings"] = record["timings"]
        figures["cold_over_cached"] = round(record["took_s"] / max(hit.took_s, 1e-3), 1)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--cold", action="store_true", help="also build the image cold")
    parser.add_argument("--out", type=Path, default=BENCH / "results" / "sandbox_overhead.json")
    parser.add_argument(
        "--flood", type=int, default=0, metavar="N",
        help="only measure an attempt whose output holds N + 1 files (e.g. 40000), capped "
        "and uncapped",
    )  # fmt: skip
    args = parser.parse_args()
    ensure_engine(state_dir=Settings.from_env().engine_state)
    client = engine_client()
    if args.flood:
        with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp_name:
            tag = image_figures(client, False, Path(tmp_name) / "image")["tag"]
            figures = flood(client, tag, Path(tmp_name), args.flood)
        print(json.dumps(figures, indent=2))
        flood_out = args.out.with_name("sandbox_output_flood.json")
        flood_out.parent.mkdir(parents=True, exist_ok=True)
        flood_out.write_text(json.dumps(figures, indent=2) + "\n")
        return 0
    with tempfile.TemporaryDirectory(prefix="recon-bench-") as tmp_name:
        tmp = Path(tmp_name)
        image = image_figures(client, args.cold, tmp / "image")
        tag = image["tag"]
        bare(client, tag)  # warm the engine's caches before measuring
        rows: dict[str, list[float]] = {"bare": [], "attempt": [], "native": []}
        phases: list[dict] = []
        for i in range(args.runs):
            rows["bare"].append(bare(client, tag))
            took, timings = attempt(client, tag, tmp, i)
            rows["attempt"].append(took)
            phases.append(timings)
            rows["native"].append(native(tmp, i))
    result = {
        "params": {"runs": args.runs, "budget": BUDGET.model_dump()},
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "engine": client.version()["Version"],
        },
        "seconds": {name: summary(values) for name, values in rows.items()},
        "attempt_over_bare": round(
            statistics.median(rows["attempt"]) / statistics.median(rows["bare"]), 2
        ),
        "attempt_phases_median": {
            k: round(statistics.median(p.get(k, 0.0) for p in phases), 3) for k in phases[0]
        },
        "image": image,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{'column':<10}{'median s':>10}{'min':>8}{'max':>8}")
    for name, s in result["seconds"].items():
        print(f"{name:<10}{s['median']:>10}{s['min']:>8}{s['max']:>8}")
    print(f"attempt / bare container: {result['attempt_over_bare']}x")
    print(f"attempt phases (median s): {result['attempt_phases_median']}")
    print(f"image: {image}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
