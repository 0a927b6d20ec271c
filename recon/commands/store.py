"""The store commands: ``store verify|gc`` and ``deps fetch``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from recon.commands.base import Commands, Handler, open_project
from recon.errors import StoreError
from recon.project.settings import Settings
from recon.store import ActionCache, Store, StoreGuard, gc, verify

if TYPE_CHECKING:
    from recon.release.roots import Roots

VERIFY_HELP = (
    "re-hash every object; report corrupt or missing objects and garbage pointers (exit 1 if any)"
)
REPAIR_HELP = (
    "quarantine corrupt objects, drop the action records that reach a corrupt or missing "
    "object and remove their pointers (and garbage ones), so the next build runs those "
    "cells again; exit 0 once repaired"
)
GC_HELP = (
    "remove objects and action records no pointer or manifest reaches; waits for the builds "
    "using the store to end first"
)
FETCH_HELP = (
    "fetch the pinned npm packages and wheels (recon/sandbox/offline_deps.yaml) once into "
    "store/deps/ with npm and pip; a no-op when already there"
)


def _store(args: argparse.Namespace) -> tuple[Store, ActionCache, Roots]:
    from recon.release.roots import live_roots

    project = open_project(args)
    roots = live_roots(project.store_root, project.root / "releases")
    return project.store(), ActionCache(project.store_root), roots


def cmd_store_verify(args: argparse.Namespace) -> int:
    if not args.repair:
        return _verify(args)
    return _alone(args, _verify)  # a repair removes records: never under a build


def _alone(args: argparse.Namespace, run: Handler) -> int:
    """``run``, once no build uses the store (saying so while it waits)."""
    project = open_project(args)
    guard = StoreGuard(project.store_root)
    with guard.exclusive(
        lambda: print(
            f"waiting for the builds using {project.store_root} to end ({guard.path})",
            file=sys.stderr,
            flush=True,
        )
    ):
        return run(args)  # fmt: skip


def _verify(args: argparse.Namespace) -> int:
    store, cache, roots = _store(args)
    refs = [ref for refs in roots.refs.values() for ref in refs]
    report = verify(store, cache, refs, repair=args.repair)
    for digest in report.corrupt:
        print(f"corrupt: {store.path(digest)}" + (" (quarantined)" if args.repair else ""))
    for digest in report.missing:
        print(f"missing: {digest}")
    for path in roots.unreadable:
        print(f"garbage pointer: {path}" + (" (removed)" if args.repair else ""))
    if args.repair:
        dropped = set(report.dropped)
        stale = [p for p, key in roots.pointers.items() if key in dropped]
        for path in [*roots.unreadable, *stale]:
            path.unlink(missing_ok=True)
        print(
            f"repaired: {len(report.dropped)} action record(s) dropped, "
            f"{len(stale) + len(roots.unreadable)} pointer(s) removed; "
            "the next `doit release:<id>` runs those cells again"
        )
    bad = not report.ok or bool(roots.unreadable)
    state = "NOT clean" if bad else "clean"
    print(
        f"{state}: {report.checked} object(s) re-hashed, {len(report.corrupt)} corrupt, "
        f"{len(report.missing)} missing, {len(roots.unreadable)} garbage pointer(s)"
    )
    return 1 if bad and not args.repair else 0


def cmd_store_gc(args: argparse.Namespace) -> int:
    return _gc(args) if args.dry_run else _alone(args, _gc)


def _gc(args: argparse.Namespace) -> int:
    store, cache, roots = _store(args)
    if roots.unreadable:
        raise StoreError(
            f"gc refused: {len(roots.unreadable)} pointer file(s) cannot be read "
            f"({roots.unreadable[0]}), so what they keep alive is unknown; "
            "run `recon store verify --repair` first"
        )
    report = gc(store, cache, roots.refs, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    print(
        f"{verb} {len(report.removed_objects)} object(s) ({report.freed_bytes} bytes) and "
        f"{len(report.removed_actions)} action record(s); kept {report.kept} object(s)"
    )
    return 0


def cmd_deps_fetch(args: argparse.Namespace) -> int:
    from recon.sandbox.deps import fetch

    settings = Settings.from_env()
    store = settings.store_root(Path(args.root))
    done = fetch(settings.deps_root(store))
    what = "fetched" if done.fetched else "already fetched; nothing to do:"
    print(
        f"{what} {done.path}: {done.npm_packages} npm package(s), {done.wheels} wheel(s), "
        f"{done.size_bytes / 1e6:.1f} MB in {done.took_s}s"
    )
    return 0


def register(commands: Commands) -> None:
    store = commands.group("store", "inspect and maintain the content-addressed store")
    check = store.add("verify", cmd_store_verify, VERIFY_HELP)
    check.add_argument("--repair", action="store_true", help=REPAIR_HELP)
    collect = store.add("gc", cmd_store_gc, GC_HELP)
    collect.add_argument(
        "--dry-run", action="store_true", help="report what would be removed, remove nothing"
    )
    deps = commands.group("deps", "the offline dependency store formal attempts install from")
    deps.add("fetch", cmd_deps_fetch, FETCH_HELP)
