"""The ``recon`` command. Errors print one line without a traceback; exit 2 means bad input."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from recon.calibrate.commands import register as register_calibrate_commands
from recon.curate.commands import register as register_case_commands
from recon.errors import EXIT_BAD_INPUT, ConfigError, ReconError, StoreError
from recon.pipeline.commands import register as register_build_commands
from recon.project.loader import Project
from recon.release.commands import register as register_release_commands
from recon.site.commands import register as register_site_commands
from recon.store import ActionCache, Store, StoreGuard, gc, verify

if TYPE_CHECKING:
    from recon.release.roots import Roots

Handler = Callable[[argparse.Namespace], int]


def _project(args: argparse.Namespace) -> Project:
    project = Project.open(Path(args.root))
    project.validate()
    return project


def cmd_validate(args: argparse.Namespace) -> int:
    project = _project(args)
    checked = ""
    if args.render:
        from recon.curate.casecheck import check

        check(list(project.cases.values()))
        checked = (
            "; states, regions, assertions at every viewport and workflows checked on each "
            "rendered reference"
        )
    print(
        f"ok: {len(project.cases)} case(s), {len(project.entries)} entr(y/ies), "
        f"{len(project.releases)} release(s){checked}"
    )
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    from recon.model import SCHEMAS

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, model in sorted(SCHEMAS.items()):
        path = out / f"{name}.schema.json"
        path.write_text(json.dumps(model.model_json_schema(), indent=2, sort_keys=True) + "\n")
        print(path)
    return 0


def _store(args: argparse.Namespace) -> tuple[Store, ActionCache, Roots]:
    from recon.release.roots import live_roots

    project = _project(args)
    roots = live_roots(project.store_root, project.root / "releases")
    return Store(project.store_root), ActionCache(project.store_root), roots


def cmd_store_verify(args: argparse.Namespace) -> int:
    if not args.repair:
        return _verify(args)
    project = _project(args)
    guard = StoreGuard(project.store_root)  # a repair removes records: never under a build
    with guard.exclusive(
        lambda: print(
            f"waiting for the builds using {project.store_root} to end ({guard.path})",
            file=sys.stderr,
            flush=True,
        )
    ):
        return _verify(args)  # fmt: skip


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
    if args.dry_run:
        return _gc(args)
    project = _project(args)
    guard = StoreGuard(project.store_root)
    with guard.exclusive(
        lambda: print(
            f"waiting for the builds using {project.store_root} to end ({guard.path})",
            file=sys.stderr,
            flush=True,
        )
    ):
        return _gc(args)  # fmt: skip


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


def cmd_diff(args: argparse.Namespace) -> int:
    from recon.release.diff import diff, load_side
    from recon.release.diff_report import render_table, to_json
    from recon.release.sides import stale_note
    from recon.release.tries import store_reader, tries_of

    root = Path(args.root)
    a = load_side(args.a, root)
    b = load_side(args.b, root)
    for side in (args.a, args.b):
        note = stale_note(side, root)
        if note is not None:
            print(f"recon: {note}", file=sys.stderr)
    read = store_reader(root)  # each slot's earlier tries, from their records
    tries = (tries_of(a[1], read), tries_of(b[1], read))
    result = diff(a[0], a[1], b[0], b[1], tolerance=args.tolerance, tries=tries)
    if args.json:
        print(json.dumps(to_json(result), indent=2, sort_keys=True))
    else:
        print(render_table(result), end="")
    return 0 if result.identical else 1


def cmd_check(args: argparse.Namespace) -> int:
    from recon.model.kinds import CHECKED_KINDS
    from recon.pipeline.check import check, sample
    from recon.pipeline.tasks import Pipeline

    pipeline = Pipeline(_project(args))
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


def cmd_curate_evidence(args: argparse.Namespace) -> int:
    from recon.curate import render_evidence

    project = _project(args)
    if args.case not in project.cases:
        raise ConfigError(f"cases/{args.case}/case.yaml: no such case")
    case = project.cases[args.case]
    for path in render_evidence(case.reference, case.public, case.contract):
        print(path)
    return 0


def cmd_deps_fetch(args: argparse.Namespace) -> int:
    from recon.sandbox.deps import fetch

    root = Path(args.root)
    store = Path(os.environ.get("RECON_STORE") or root / "store")
    done = fetch(store)
    what = "fetched" if done.fetched else "already fetched; nothing to do:"
    print(
        f"{what} {done.path}: {done.npm_packages} npm package(s), {done.wheels} wheel(s), "
        f"{done.size_bytes / 1e6:.1f} MB in {done.took_s}s"
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="recon",
        description="recon — the ReconBench harness. Build releases with `doit release:<id>`; "
        "these commands validate, inspect, compare and calibrate them.",
        epilog="exit codes: 0 ok; 1 a run failure; 2 bad input (one line naming the file, "
        "field or setting); 75 a `doit release:<id> executor=ray` build stopped because no "
        "live node offered what a cell needs for give_up_s (finished cells are kept: run it "
        "again to resume)",
    )
    parser.add_argument("--root", default=".", help="project root (default: current folder)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        return p

    validate = add(
        "validate",
        cmd_validate,
        "load every case, entry and release definition, then render each case's reference "
        "and check that it is the fixed point of its grade: every contract state is reached, "
        "every region selector resolves, every sealed assertion passes at every viewport "
        "(and names one element unless it says which match it means) and every workflow "
        "passes; print every deviation with its observed value, exit 2 if there is one",
    )
    validate.add_argument(
        "--no-render",
        dest="render",
        action="store_false",
        help="only load and cross-check the files (no browser)",
    )
    schema = add("schema", cmd_schema, "write the JSON Schema of every file format")
    schema.add_argument("--out", default="schemas", help="output folder (default: schemas/)")
    store = add("store", lambda a: 0, "inspect and maintain the content-addressed store")
    store_sub = store.add_subparsers(dest="store_command", required=True, metavar="ACTION")
    check = store_sub.add_parser(
        "verify",
        help="re-hash every object; report corrupt or missing objects and garbage pointers "
        "(exit 1 if any)",
    )
    check.add_argument(
        "--repair",
        action="store_true",
        help="quarantine corrupt objects, drop the action records that reach a corrupt or "
        "missing object and remove their pointers (and garbage ones), so the next build "
        "runs those cells again; exit 0 once repaired",
    )
    check.set_defaults(handler=cmd_store_verify)
    collect = store_sub.add_parser(
        "gc",
        help="remove objects and action records no pointer or manifest reaches; waits for "
        "the builds using the store to end first",
    )
    collect.add_argument(
        "--dry-run", action="store_true", help="report what would be removed, remove nothing"
    )
    collect.set_defaults(handler=cmd_store_gc)
    compare = add(
        "diff",
        cmd_diff,
        "compare two releases (manifest paths, release ids, or <id>@<version> of a frozen "
        "release): inputs, cells, scores, ranks, and why each score or rank moved; "
        "exit 0 identical, 1 different",
    )
    compare.add_argument("a", help="a manifest.json path, a release id or <id>@<version>")
    compare.add_argument("b", help="a manifest.json path, a release id or <id>@<version>")
    compare.add_argument("--json", action="store_true", help="print JSON instead of a table")
    compare.add_argument(
        "--tolerance",
        type=float,
        default=1e-9,
        help="float moves up to this count as unchanged (default: 1e-9)",
    )
    recheck = add(
        "check",
        cmd_check,
        "re-execute a sample of a release's finished deterministic cells into a scratch store "
        "and compare their outputs with the recorded ones; exit 1 naming each cell that "
        "differs (an undeclared input or non-determinism)",
    )
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
    curate = add("curate", lambda a: 0, "curator tools for cases")
    curate_sub = curate.add_subparsers(dest="curate_command", required=True, metavar="ACTION")
    evidence = curate_sub.add_parser(
        "evidence",
        help="render the sealed reference into public/evidence/: a still per viewport and "
        "per named state, a frame strip and animated WebP per declared transition",
    )
    evidence.add_argument("case", help="case id")
    evidence.set_defaults(handler=cmd_curate_evidence)
    deps = add("deps", lambda a: 0, "the offline dependency store formal attempts install from")
    deps_sub = deps.add_subparsers(dest="deps_command", required=True, metavar="ACTION")
    deps_fetch = deps_sub.add_parser(
        "fetch",
        help="fetch the pinned npm packages and wheels (recon/sandbox/offline_deps.yaml) once "
        "into store/deps/ with npm and pip; a no-op when already there",
    )
    deps_fetch.set_defaults(handler=cmd_deps_fetch)
    register_case_commands(sub, add)
    register_release_commands(sub, add)
    register_site_commands(sub, add)
    register_build_commands(sub, add)
    register_calibrate_commands(sub, add)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0) and EXIT_BAD_INPUT
    try:
        return int(args.handler(args))
    except ReconError as err:
        for line in str(err).splitlines() or [""]:  # one line per problem
            print(f"recon: {line}", file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
