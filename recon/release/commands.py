"""The release commands of ``recon``: ``attempt withdraw|restore`` and ``release freeze``.

Kept apart from :mod:`recon.cli`, which calls :func:`register` once.
"""

from __future__ import annotations

import argparse
import getpass
import os
from collections.abc import Callable
from pathlib import Path

from recon.errors import ConfigError
from recon.project.loader import Project

Handler = Callable[[argparse.Namespace], int]
Add = Callable[[str, Handler, str], argparse.ArgumentParser]


def _project(args: argparse.Namespace) -> Project:
    project = Project.open(Path(args.root))
    project.validate()
    return project


def _who() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def _attempt(args: argparse.Namespace, restoring: bool) -> int:
    from recon.release.withdraw import Request, restore, withdraw

    project = _project(args)
    req = Request(project.root, project.store_root, project.releases, args.attempt,
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

    project = _project(args)
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


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], add: Add) -> None:
    attempt = add("attempt", lambda a: 0, "withdraw an attempt from a release, or restore it")
    actions = attempt.add_subparsers(dest="attempt_command", required=True, metavar="ACTION")
    for name, handler, text in (
        (
            "withdraw",
            cmd_attempt_withdraw,
            "withdraw an attempt whose run conditions did not match the task: an immutable "
            "sidecar into the store (who, when, why, the attempt record's digest), listed in "
            "releases/<id>.withdrawals.json; it then counts in no denominator",
        ),
        (
            "restore",
            cmd_attempt_restore,
            "undo a withdrawal, with a sidecar of its own",
        ),
    ):
        p = actions.add_parser(name, help=text, description=text)
        p.add_argument("attempt", help="attempt id: <protocol>.<entry>.<case>.<index>")
        p.add_argument("--reason", required=True, help="why (recorded in the sidecar)")
        p.add_argument("--release", help="the release (needed when several hold the attempt)")
        p.add_argument("--by", help="who (default: the current user)")
        p.set_defaults(handler=handler)
    release = add("release", lambda a: 0, "freeze a release")
    release_sub = release.add_subparsers(dest="release_command", required=True, metavar="ACTION")
    text = (
        "record the built release's manifest digest and every input digest in "
        "releases/<id>.lock; later builds whose inputs differ are refused (exit 2) unless "
        "re-graded on purpose with `doit release:<id> regrade=<id>`"
    )
    freeze = release_sub.add_parser("freeze", help=text, description=text)
    freeze.add_argument("release", help="release id")
    freeze.set_defaults(handler=cmd_release_freeze)
