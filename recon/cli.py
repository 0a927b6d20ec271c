"""The ``recon`` command. Errors print one line without a traceback; exit 2 means bad input."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from recon.errors import EXIT_BAD_INPUT, ConfigError, ReconError
from recon.pipeline.project import Project
from recon.store import ActionCache, OutputRef, Store, gc, verify

Handler = Callable[[argparse.Namespace], int]


def _project(args: argparse.Namespace) -> Project:
    project = Project.open(Path(args.root))
    project.validate()
    return project


def cmd_validate(args: argparse.Namespace) -> int:
    project = _project(args)
    checked = ""
    if args.render:
        from recon.pipeline.casecheck import check

        check(list(project.cases.values()))
        checked = "; regions and assertions checked on each rendered reference"
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


def _store(args: argparse.Namespace) -> tuple[Store, ActionCache, dict[str, list[OutputRef]]]:
    from recon.release.roots import live_roots

    project = _project(args)
    roots = live_roots(project.store_root, project.root / "releases")
    return Store(project.store_root), ActionCache(project.store_root), roots


def cmd_store_verify(args: argparse.Namespace) -> int:
    store, cache, roots = _store(args)
    report = verify(store, cache, [ref for refs in roots.values() for ref in refs])
    for digest in report.corrupt:
        print(f"corrupt: {store.path(digest)}")
    for digest in report.missing:
        print(f"missing: {digest}")
    state = "clean" if report.ok else "NOT clean"
    print(
        f"{state}: {report.checked} object(s) re-hashed, {len(report.corrupt)} corrupt, "
        f"{len(report.missing)} missing"
    )
    return 0 if report.ok else 1


def cmd_store_gc(args: argparse.Namespace) -> int:
    store, cache, roots = _store(args)
    report = gc(store, cache, roots, dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    print(
        f"{verb} {len(report.removed_objects)} object(s) ({report.freed_bytes} bytes) and "
        f"{len(report.removed_actions)} action record(s); kept {report.kept} object(s)"
    )
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    from recon.release.diff import diff, load_side, render_table, to_json

    root = Path(args.root)
    a = load_side(args.a, root)
    b = load_side(args.b, root)
    result = diff(a[0], a[1], b[0], b[1])
    if args.json:
        print(json.dumps(to_json(result), indent=2, sort_keys=True))
    else:
        print(render_table(result), end="")
    return 0 if result.identical else 1


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
        "these commands validate, inspect and compare them.",
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
        "and check that every region selector resolves and every sealed assertion passes "
        "on it; exit 2 on the first problem",
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
        "verify", help="re-hash every object; report corrupt or missing ones (exit 1 if any)"
    )
    check.set_defaults(handler=cmd_store_verify)
    collect = store_sub.add_parser(
        "gc", help="remove objects and action records no pointer or manifest reaches"
    )
    collect.add_argument(
        "--dry-run", action="store_true", help="report what would be removed, remove nothing"
    )
    collect.set_defaults(handler=cmd_store_gc)
    compare = add(
        "diff",
        cmd_diff,
        "compare two releases (manifest paths or release ids); exit 0 identical, 1 different",
    )
    compare.add_argument("a", help="a manifest.json path or a release id")
    compare.add_argument("b", help="a manifest.json path or a release id")
    compare.add_argument("--json", action="store_true", help="print JSON instead of a table")
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
        print(f"recon: {err}", file=sys.stderr)
        return err.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
