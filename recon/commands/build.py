"""The build commands: ``status`` (a running or finished build's progress, from the store),
``plan`` (a release's cost from measured cell times), ``replay`` (an attempt re-run offline
from its gateway recording, its build output compared) and ``check`` (finished cells
re-executed into a scratch store, their outputs compared).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from recon.commands.base import Commands, open_project
from recon.errors import ConfigError
from recon.model import BuildProgress, load_json
from recon.project.loader import Project
from recon.project.settings import Settings
from recon.release import stale

if TYPE_CHECKING:
    from recon.pipeline.tasks import Pipeline

STATUS_HELP = (
    "print a release build's progress from the store (cells done, running and failed by "
    "kind, each entry's attempts, the cells waiting for resources no live Ray node offers, "
    "throughput, eta; whether the published release is stale, its last build failed), also "
    "while the build runs in another shell"
)
PLAN_HELP = (
    "estimate a release's cost from the cell times measured in the store: worker-hours per "
    "kind, wall time at N workers, storage"
)
REPLAY_HELP = (
    "re-run a built attempt offline, on its backend from its inputs, its model calls "
    "answered in order from its gateway recording (no model host, no key), and compare the "
    "build output with the stored one; stores nothing; exit 0 identical, 1 different (each "
    "differing file named), 3 harness failure (a call that no longer fits the recording, "
    "naming the turn)"
)
CHECK_HELP = (
    "re-execute a sample of a release's finished deterministic cells into a scratch store "
    "and compare their outputs with the recorded ones; exit 1 naming each cell that "
    "differs (an undeclared input or non-determinism)"
)


def _pipeline(args: argparse.Namespace) -> Pipeline:
    from recon.pipeline.tasks import Pipeline

    project = Project.open(Path(args.root), Settings.from_env())
    pipeline = Pipeline(project)
    project.release(args.release)  # an unknown id is bad input
    if args.release in pipeline.refused:
        raise ConfigError(pipeline.refused[args.release])
    return pipeline


def _alive(snap: BuildProgress) -> str:
    if snap.finished:
        return "finished"
    if snap.host != socket.gethostname():
        return f"running on {snap.host} (pid {snap.pid}), as of its last snapshot"
    try:
        os.kill(snap.pid, 0)
    except ProcessLookupError:
        return f"interrupted (pid {snap.pid} is gone; run the build again to resume)"
    except PermissionError:
        pass
    return f"running (pid {snap.pid})"


def cmd_status(args: argparse.Namespace) -> int:
    from recon.pipeline.progress import snapshot_path
    from recon.pipeline.view import summary

    project = open_project(args)
    project.release(args.release)
    folder = project.root / "releases" / args.release
    mark = stale.load(folder)
    path = snapshot_path(project.store_root, args.release)
    if not path.is_file():
        print(f"release {args.release}: no build has run against {project.store_root}")
        if mark is not None:
            print(stale.describe(mark, os.path.relpath(folder, project.root)))
        return 0
    snap = load_json(BuildProgress, path)
    if args.json:
        shown = {**snap.model_dump(mode="json"),
                 "stale": None if mark is None else mark.model_dump(mode="json")}  # fmt: skip
        print(json.dumps(shown, indent=2, sort_keys=True))
        return 0
    print(f"release {args.release}: {_alive(snap)}")
    if mark is not None:
        print(stale.describe(mark, os.path.relpath(folder, project.root)))
    for row in summary(snap):
        print(row)
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from recon.pipeline.plan import WhatIf, plan
    from recon.pipeline.view import duration

    pipeline = _pipeline(args)
    if args.workers < 1:
        raise ConfigError(f"--workers: {args.workers}: give at least 1")
    what_if = WhatIf(args.cases, args.entries, args.repeats, args.attempt_s)
    release = pipeline.project.release(args.release)
    found = plan(pipeline.rt, release, pipeline.roots[args.release], args.workers, what_if)
    scale = found.scale
    scaled = f" (what-if: attempts x{scale['attempt']:g}, cases x{scale['case']:g})"
    print(f"recon plan {args.release}: {args.workers} worker(s){scaled if what_if.any() else ''}")
    print(f"{'kind':<10}{'cells':>9}{'measured':>10}{'mean s':>9}{'max s':>9}{'worker h':>10}"
          f"{'MB':>10}")  # fmt: skip
    for k in found.kinds.values():
        note = " (borrowed)" if k.borrowed else ""
        print(
            f"{k.kind:<10}{k.count:>9.0f}{k.measured:>10}{k.mean_s:>9.2f}{k.max_s:>9.2f}"
            f"{k.worker_s / 3600:>10.2f}{k.count * k.mean_bytes / 1e6:>10.1f}{note}"
        )
    low, high = found.wall_s
    print(
        f"total: {found.worker_s / 3600:.2f} worker-hours; critical path "
        f"{duration(found.critical_s)}; wall at {args.workers} worker(s) between "
        f"{duration(low)} and {duration(high)}; storage up to {found.bytes / 1e9:.2f} GB"
    )
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from recon.pipeline.replay import EXITS, find_cell, replay_attempt
    from recon.pipeline.tasks import Pipeline
    from recon.release.withdraw import release_of

    project = open_project(args)
    rid = release_of(project.releases, args.attempt, args.release)
    out = Path(args.out) if args.out else None
    if out is not None and out.exists():
        raise ConfigError(f"--out {out}: already exists; name a new folder")
    pipeline = Pipeline(project)
    if rid in pipeline.refused:
        raise ConfigError(pipeline.refused[rid])
    cell = find_cell(pipeline.roots[rid], args.attempt)
    try:
        found = replay_attempt(pipeline.rt, cell, out, lambda line: print(line, file=sys.stderr))
    finally:
        pipeline.rt.close()
    print(found.line)
    for path in found.files:
        print(f"  differs: {path}")
    return EXITS[found.verdict]


def cmd_check(args: argparse.Namespace) -> int:
    from recon.model.kinds import CHECKED_KINDS
    from recon.pipeline.check import check, sample
    from recon.pipeline.tasks import Pipeline

    pipeline = Pipeline(open_project(args))
    pipeline.project.release(args.release)  # an unknown id is bad input
    if args.release in pipeline.refused:
        raise ConfigError(pipeline.refused[args.release])
    kinds = args.kind or list(CHECKED_KINDS)
    cells = sample(pipeline.roots[args.release], kinds, args.sample, args.seed)
    print(
        f"recon check {args.release}: up to {args.sample} cell(s) of each of {len(kinds)} "
        f"kind(s), seed {args.seed}, re-executed into a scratch store",
        flush=True,
    )
    counts: dict[str, int] = {}
    for found in check(pipeline.rt, cells):
        counts[found.verdict] = counts.get(found.verdict, 0) + 1
        print(f"  {found.verdict:<9} {found.cell}  {found.took_s:.2f}s", flush=True)
        for name, (old, new) in found.outputs.items():
            print(f"      {name}: {str(old)[:12]} recorded, {str(new)[:12]} now")
        for path in found.files:
            print(f"      differs: {path}")
    pipeline.rt.close()
    summary = ", ".join(f"{n} {v}" for v, n in sorted(counts.items()))
    print(f"checked {len(cells)} cell(s): {summary or 'none'}")
    if counts.get("stale") or counts.get("unbuilt"):
        print(f"stale or unbuilt cells are not checked: run `doit release:{args.release}` first")
    return 1 if counts.get("different") else 0


def register(commands: Commands) -> None:
    status = commands.add("status", cmd_status, STATUS_HELP)
    status.add_argument("release", help="release id")
    status.add_argument("--json", action="store_true", help="print the snapshot as JSON")
    costs = commands.add("plan", cmd_plan, PLAN_HELP)
    costs.add_argument("release", help="release id")
    costs.add_argument("--workers", type=int, default=1, help="workers (default: 1)")
    costs.add_argument("--cases", type=int, help="what-if: this many cases")
    costs.add_argument("--entries", type=int, help="what-if: this many entries")
    costs.add_argument("--repeats", type=int, help="what-if: this many repeats")
    costs.add_argument("--attempt-s", type=float, dest="attempt_s",
                       help="what-if: every attempt takes this many seconds")  # fmt: skip
    again = commands.add("replay", cmd_replay, REPLAY_HELP)
    again.add_argument("attempt", help="attempt id: <protocol>.<entry>.<case>.<index>")
    again.add_argument("--release", help="the release (needed when several hold the attempt)")
    again.add_argument("--out", metavar="DIR",
                       help="write the replayed build output into this new folder")  # fmt: skip
    recheck = commands.add("check", cmd_check, CHECK_HELP)
    recheck.add_argument("release", help="release id")
    recheck.add_argument(
        "--kind",
        action="append",
        help="check only this kind (repeatable; default: every deterministic kind)",
    )
    recheck.add_argument(
        "--sample", type=int, default=3, help="cells per kind (default: 3)", metavar="N"
    )
    recheck.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
