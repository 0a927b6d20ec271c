"""The curator commands of ``recon``: ``case validate|ladder|inspect|new|freeze``.

Kept apart from :mod:`recon.cli`, which calls :func:`register` once.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from recon.errors import ConfigError
from recon.project.loader import Project

Handler = Callable[[argparse.Namespace], int]
Add = Callable[[str, Handler, str], argparse.ArgumentParser]

VALIDATE_HELP = (
    "check the named cases (default: every case) and print every problem in one run, "
    "rendering only those cases: files parse, provenance pins the reference, no public file "
    "refers to sealed material, the starter builds offline, the reference reaches every "
    "state and passes every sealed check at every viewport and every workflow, the evidence "
    "is what the reference renders now, every check marked `discriminates: true` fails on "
    "the starter and no preservation check (assertion, or region below "
    "thresholds.region_pass) fails on it already; exit 2 if there is a problem"
)


_SELECTOR_GRAMMAR = 'tag, [role=...], [aria-label=...], :has-text("..."), >> nth=N'


def cmd_case_validate(args: argparse.Namespace) -> int:
    from recon.curate.validate import check

    project = Project.open(Path(args.root))
    count = check(project, args.cases, render=args.render)
    rendered = "rendered and " if args.render else ""
    print(f"ok: {count} case(s) {rendered}validated")
    return 0


def cmd_case_new(args: argparse.Namespace) -> int:
    from recon.curate.scaffold import scaffold

    root = Path(args.root)
    for path in scaffold(root, args.case):
        print(path)
    if args.evidence:
        _render_evidence(root, args.case)
    print(
        f"scaffolded cases/{args.case}: fill in what its comments say, then run "
        f"`recon case validate {args.case}`"
    )
    return 0


def _render_evidence(root: Path, case_id: str) -> None:
    from recon.curate.freeze import render_evidence

    project = Project.open(root)
    case = project.load_case(root / "cases" / case_id / "case.yaml")
    for path in render_evidence(case.reference, case.public, case.contract):
        print(path)


def cmd_case_inspect(args: argparse.Namespace) -> int:
    from recon.curate.inspect import inspect

    root = Path(args.root)
    case_file = root / "cases" / args.case / "case.yaml"
    if not case_file.is_file():
        raise ConfigError(f"{case_file}: no such case; check the id")
    case = Project.open(root).load_case(case_file)
    seen = inspect(case, args.viewport, args.selector, args.route)
    print(seen.header)
    for line in [*seen.tree, *seen.matches]:
        print(line)
    return 0


def cmd_case_freeze(args: argparse.Namespace) -> int:
    from recon.curate.reference import freeze_reference
    from recon.curate.sources import fetch

    root = Path(args.root)
    project = Project.open(root)
    folder = root / "cases" / args.case
    if not (folder / "case.yaml").is_file():
        raise ConfigError(
            f"{folder / 'case.yaml'}: no such case; scaffold it with `recon case new {args.case}`"
        )
    fetched = fetch(args.source, root)
    done = freeze_reference(folder, project.sealed_dir(args.case), fetched, args.notes)
    source = f"{fetched.kind} {fetched.package}@{fetched.version} ({fetched.integrity})"
    if done.unchanged:
        print(
            f"unchanged: {len(fetched.files)} file(s) of {source}, identical digests; "
            f"case version {done.version}"
        )
    else:
        print(
            f"froze {len(fetched.files)} file(s) of {source} as case version {done.version}: "
            f"{len(done.added)} added, {len(done.changed)} changed, {len(done.removed)} removed"
        )
    if args.evidence:
        _render_evidence(root, args.case)
    return 0


def cmd_case_ladder(args: argparse.Namespace) -> int:
    from recon.curate.ladder_run import run

    project = Project.open(Path(args.root))
    project.validate()
    ids = sorted(project.cases) if args.all else list(args.cases)
    if not ids:
        raise ConfigError("case ladder: name case ids or give --all")
    unknown = [i for i in ids if i not in project.cases]
    if unknown:
        known = ", ".join(sorted(project.cases))
        raise ConfigError(f"cases/{unknown[0]}/case.yaml: no such case (known: {known})")
    broken = 0
    results, cells = run(project, ids, jobs=args.jobs)
    for result in results:
        print(result.report)
        for found in result.breaks:
            print(f"  BROKEN: {found.line(result.case)}")
        print(f"  {'ordered' if not result.breaks else 'NOT ordered'}")
        broken += bool(result.breaks)
    print(
        f"{len(ids) - broken} of {len(ids)} ladder(s) ordered; cells: {cells.ran} ran, "
        f"{cells.reused} reused from the store, {cells.up_to_date} doit task(s) up to date"
    )
    return 1 if broken else 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], add: Add) -> None:
    case = add("case", lambda a: 0, "curator commands: validate, ladder, inspect, new, freeze")
    case_sub = case.add_subparsers(dest="case_command", required=True, metavar="ACTION")

    def action(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p = case_sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        return p

    validate = action("validate", cmd_case_validate, VALIDATE_HELP)
    validate.add_argument("cases", nargs="*", metavar="ID", help="case ids (default: all)")
    validate.add_argument(
        "--no-render",
        dest="render",
        action="store_false",
        help="only the file checks and the starter build (no browser)",
    )

    new = action(
        "new",
        cmd_case_new,
        "scaffold cases/<id>: case.yaml, brief, contract, starter, sealed grading and "
        "reference, provenance, with comments that say what to fill in; then render its "
        "evidence. The scaffold passes `recon case validate` as written",
    )
    new.add_argument("case", metavar="ID", help="the new case's id (lower case, digits, -)")
    new.add_argument(
        "--no-evidence",
        dest="evidence",
        action="store_false",
        help="do not render the evidence (no browser)",
    )

    look = action(
        "inspect",
        cmd_case_inspect,
        "render a case's sealed reference and print its accessibility tree with chromium's "
        "computed roles and names (an <img> is `image`, a <header> `banner`); with "
        "--selector, every element a region selector matches and the one a region scores",
    )
    look.add_argument("case", metavar="ID", help="case id")
    look.add_argument("--viewport", help="contract viewport (default: the first)")
    look.add_argument("--route", help="contract route (default: the first)")
    look.add_argument(
        "--selector",
        help=f"a region selector to resolve ({_SELECTOR_GRAMMAR})",
    )

    freeze = action(
        "freeze",
        cmd_case_freeze,
        "pin the authoritative artifact as a case's sealed reference: SOURCE is a folder, "
        "npm:<pkg>@<version>[:<path>] (npm pack), deb:<pkg>=<version>[:<path>] (apt-get "
        "download) or a URL (refused when no network reaches it); writes the reference and "
        "provenance.yaml (source, version, integrity, every file's blake3, notes, version "
        "history), then renders the evidence. The same inputs give identical digests; "
        "changed files bump the case version",
    )
    freeze.add_argument("case", metavar="ID", help="case id (scaffold it first: `recon case new`)")
    freeze.add_argument("--from", dest="source", required=True, metavar="SOURCE", help="where from")
    freeze.add_argument("--notes", help="curator notes for provenance (default: keep the old ones)")
    freeze.add_argument(
        "--no-evidence",
        dest="evidence",
        action="store_false",
        help="do not render the evidence (no browser)",
    )

    ladder = action(
        "ladder",
        cmd_case_ladder,
        "grade each case's validity ladder (reference, faithful answer, then cumulative "
        "defects of the heaviest region: recoloured, recoloured and shifted, missing; blank; "
        "and the two evidence cheats) as doit cells in the project's store, "
        "cached like any other; print the table of totals and dimensions; exit 1 naming the "
        "step and dimension where the order breaks",
    )
    ladder.add_argument("cases", nargs="*", metavar="ID", help="case ids")
    ladder.add_argument("--all", action="store_true", help="every case of the project")
    ladder.add_argument(
        "-n", "--jobs", type=int, default=2, help="doit worker threads (default: 2)"
    )
