"""The release commands: ``diff``, ``attempt withdraw|restore`` and ``release freeze``."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from recon.commands.base import Commands, open_project
from recon.errors import ConfigError
from recon.project.settings import Settings

if TYPE_CHECKING:
    from recon.release.diff import ReleaseDiff

DIFF_HELP = (
    "compare two releases (manifest paths, release ids, or <id>@<version> of a frozen "
    "release): inputs, cells, scores, ranks, and why each score or rank moved; "
    "exit 0 identical, 1 different"
)
WITHDRAW_HELP = (
    "withdraw an attempt whose run conditions did not match the task: an immutable "
    "sidecar into the store (who, when, why, the attempt record's digest), listed in "
    "releases/<id>.withdrawals.json; it then counts in no denominator"
)
FREEZE_HELP = (
    "record the built release's manifest digest and every input digest in "
    "releases/<id>.lock; later builds whose inputs differ are refused (exit 2) unless "
    "re-graded on purpose with `doit release:<id> regrade=<id>`"
)


def cmd_diff(args: argparse.Namespace) -> int:
    from recon.release.diff_report import render_table, to_json
    from recon.release.sides import stale_note

    result = compared(args)
    for side in (args.a, args.b):
        note = stale_note(side, Path(args.root))
        if note is not None:
            print(f"recon: {note}", file=sys.stderr)
    if args.json:
        print(json.dumps(to_json(result), indent=2, sort_keys=True))
    else:
        print(render_table(result), end="")
    return 0 if result.identical else 1


def compared(args: argparse.Namespace) -> ReleaseDiff:
    """Releases ``args.a`` and ``args.b`` compared (``recon diff``, ``recon site diff``)."""
    from recon.release.diff import diff, load_side
    from recon.release.tries import store_reader, tries_of

    root, settings = Path(args.root), Settings.from_env()
    a = load_side(args.a, root, settings)
    b = load_side(args.b, root, settings)
    read = store_reader(root, settings)  # each slot's earlier tries, from their records
    tries = (tries_of(a[1], read), tries_of(b[1], read))
    return diff(a[0], a[1], b[0], b[1], tolerance=args.tolerance, tries=tries)


def _who() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _attempt(args: argparse.Namespace, restoring: bool) -> int:
    from recon.release.withdraw import Request, restore, withdraw

    project = open_project(args)
    req = Request(project.root, project.store(), project.releases, args.attempt,
                  args.reason, args.by or _who(), args.release)  # fmt: skip
    done = restore(req) if restoring else withdraw(req)
    what = "restored {} to" if restoring else "withdrew {} from"
    print(
        f"{what.format(args.attempt)} release {done.release}: sidecar {done.sidecar[:12]} in "
        f"the store, logged in {os.path.relpath(done.path, project.root)}; "
        f"run `doit release:{done.release}` to re-aggregate"
    )
    return 0


def cmd_attempt_withdraw(args: argparse.Namespace) -> int:
    return _attempt(args, restoring=False)


def cmd_attempt_restore(args: argparse.Namespace) -> int:
    return _attempt(args, restoring=True)


def cmd_release_freeze(args: argparse.Namespace) -> int:
    from recon.model import Manifest, ManifestInputs
    from recon.pipeline.tasks import Pipeline
    from recon.release import lock

    project = open_project(args)
    release = project.release(args.release)
    existing = lock.load(project.root, release.id)
    if existing is not None:
        print(
            f"already frozen: releases/{release.id}.lock, manifest version {existing.version} "
            f"({existing.manifest[:12]})"
        )
        return 0
    pipeline = Pipeline(project)
    pointer = pipeline.rt.read_pointer(pipeline.roots[release.id])
    if pointer is None or not pipeline.rt.cache.has(pointer.key):
        raise ConfigError(
            f"release {release.id} is not built; run `doit release:{release.id}` first"
        )
    digest = pointer.outputs["manifest"].digest
    manifest = Manifest.model_validate(pipeline.rt.store.read_json(digest))
    now = ManifestInputs.model_validate(pipeline.graph.manifest_inputs(release)).flat()
    built = manifest.inputs.flat()
    moved = sorted(k for k in now.keys() | built.keys() if now.get(k) != built.get(k))
    if moved:
        raise ConfigError(
            f"release {release.id} was built from other inputs than the project's now "
            f"({lock.describe(moved)}); run `doit release:{release.id}` first"
        )
    path = lock.write(project.root, lock.frozen(release.id, digest, manifest))
    print(
        f"froze release {release.id}: {os.path.relpath(path, project.root)} records manifest "
        f"version {manifest.version} ({digest[:12]}) and {len(built)} input digests"
    )
    return 0


def register(commands: Commands) -> None:
    compare = commands.add("diff", cmd_diff, DIFF_HELP)
    compare.add_argument("a", help="a manifest.json path, a release id or <id>@<version>")
    compare.add_argument("b", help="a manifest.json path, a release id or <id>@<version>")
    compare.add_argument("--json", action="store_true", help="print JSON instead of a table")
    compare.add_argument(
        "--tolerance",
        type=float,
        default=1e-9,
        help="float moves up to this count as unchanged (default: 1e-9)",
    )
    attempt = commands.group("attempt", "withdraw an attempt from a release, or restore it")
    for name, handler, text in (
        ("withdraw", cmd_attempt_withdraw, WITHDRAW_HELP),
        ("restore", cmd_attempt_restore, "undo a withdrawal, with a sidecar of its own"),
    ):
        p = attempt.add(name, handler, text)
        p.add_argument("attempt", help="attempt id: <protocol>.<entry>.<case>.<index>")
        p.add_argument("--reason", required=True, help="why (recorded in the sidecar)")
        p.add_argument("--release", help="the release (needed when several hold the attempt)")
        p.add_argument("--by", help="who (default: the current user)")
    release = commands.group("release", "freeze a release")
    release.add("freeze", cmd_release_freeze, FREEZE_HELP).add_argument(
        "release", help="release id"
    )
