"""The curator commands: ``case new|freeze|evidence|inspect|ladder``.

Two old spellings still run, each saying first that it is deprecated: ``recon curate
evidence`` (now ``recon case evidence``) and ``recon case validate`` (now ``recon validate``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from recon.commands.base import Commands, deprecated, open_project
from recon.commands.definitions import cmd_validate, validate_arguments
from recon.errors import ConfigError
from recon.project.loader import Project
from recon.project.settings import Settings

CASE_HELP = "curator commands: new, freeze, evidence, inspect, ladder"
NEW_HELP = (
    "scaffold cases/<id>: case.yaml, brief, contract, starter, sealed grading and "
    "reference, provenance, with comments that say what to fill in; then render its "
    "evidence. The scaffold passes `recon validate <id>` as written"
)
INSPECT_HELP = (
    "render a case's sealed reference and print its accessibility tree with chromium's "
    "computed roles and names (an <img> is `image`, a <header> `banner`); with "
    "--selector, every element a region selector matches and the one a region scores"
)
FREEZE_HELP = (
    "pin the authoritative artifact as a case's sealed reference: SOURCE is a folder, "
    "npm:<pkg>@<version>[:<path>] (npm pack), deb:<pkg>=<version>[:<path>] (apt-get "
    "download) or a URL (refused when no network reaches it); writes the reference and "
    "provenance.yaml (source, version, integrity, every file's blake3, notes, version "
    "history), then renders the evidence. The same inputs give identical digests; "
    "changed files bump the case version"
)
EVIDENCE_HELP = (
    "render the sealed reference into public/evidence/: a still per viewport and per named "
    "state, a frame strip and animated WebP per declared transition"
)
LADDER_HELP = (
    "grade each case's validity ladder (reference, faithful answer, then cumulative "
    "defects of the heaviest region: recoloured, recoloured and shifted, missing; blank; "
    "and the two evidence cheats) as doit cells in the project's store, "
    "cached like any other; print the table of totals and dimensions; exit 1 naming the "
    "step and dimension where the order breaks"
)
_SELECTOR_GRAMMAR = 'tag, [role=...], [aria-label=...], :has-text("..."), >> nth=N'


def cmd_case_new(args: argparse.Namespace) -> int:
    from recon.curate.scaffold import scaffold

    root = Path(args.root)
    for path in scaffold(root, args.case):
        print(path)
    if args.evidence:
        _render_evidence(Project.open(root, Settings.from_env()), args.case)
    print(
        f"scaffolded cases/{args.case}: fill in what its comments say, then run "
        f"`recon validate {args.case}`"
    )
    return 0


def _render_evidence(project: Project, case_id: str) -> None:
    from recon.curate.freeze import render_evidence

    case = project.load_case(project.root / "cases" / case_id / "case.yaml")
    for path in render_evidence(case.reference, case.public, case.contract):
        print(path)


def cmd_case_inspect(args: argparse.Namespace) -> int:
    from recon.curate.inspect import inspect

    root = Path(args.root)
    case_file = root / "cases" / args.case / "case.yaml"
    if not case_file.is_file():
        raise ConfigError(f"{case_file}: no such case; check the id")
    case = Project.open(root, Settings.from_env()).load_case(case_file)
    seen = inspect(case, args.viewport, args.selector, args.route)
    print(seen.header)
    for line in [*seen.tree, *seen.matches]:
        print(line)
    return 0


def cmd_case_freeze(args: argparse.Namespace) -> int:
    from recon.curate.reference import freeze_reference
    from recon.curate.sources import fetch

    root = Path(args.root)
    project = Project.open(root, Settings.from_env())
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
        _render_evidence(project, args.case)
    return 0


def cmd_case_ladder(args: argparse.Namespace) -> int:
    from recon.curate.ladder_run import run

    project = open_project(args)
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


def cmd_case_evidence(args: argparse.Namespace) -> int:
    from recon.curate import render_evidence

    project = open_project(args)
    if args.case not in project.cases:
        raise ConfigError(f"cases/{args.case}/case.yaml: no such case")
    case = project.cases[args.case]
    for path in render_evidence(case.reference, case.public, case.contract):
        print(path)
    return 0


def register(commands: Commands) -> None:
    case = commands.group("case", CASE_HELP)
    new = case.add("new", cmd_case_new, NEW_HELP)
    new.add_argument("case", metavar="ID", help="the new case's id (lower case, digits, -)")
    _no_evidence(new)
    freeze = case.add("freeze", cmd_case_freeze, FREEZE_HELP)
    freeze.add_argument("case", metavar="ID", help="case id (scaffold it first: `recon case new`)")
    freeze.add_argument("--from", dest="source", required=True, metavar="SOURCE", help="where from")
    freeze.add_argument("--notes", help="curator notes for provenance (default: keep the old ones)")
    _no_evidence(freeze)
    case.add("evidence", cmd_case_evidence, EVIDENCE_HELP).add_argument("case", help="case id")
    _inspect(case.add("inspect", cmd_case_inspect, INSPECT_HELP))
    ladder = case.add("ladder", cmd_case_ladder, LADDER_HELP)
    ladder.add_argument("cases", nargs="*", metavar="ID", help="case ids")
    ladder.add_argument("--all", action="store_true", help="every case of the project")
    ladder.add_argument(
        "-n", "--jobs", type=int, default=2, help="doit worker threads (default: 2)"
    )
    _old_spellings(commands, case)


def _no_evidence(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-evidence",
        dest="evidence",
        action="store_false",
        help="do not render the evidence (no browser)",
    )


def _inspect(look: argparse.ArgumentParser) -> None:
    look.add_argument("case", metavar="ID", help="case id")
    look.add_argument("--viewport", help="contract viewport (default: the first)")
    look.add_argument("--route", help="contract route (default: the first)")
    look.add_argument("--selector", help=f"a region selector to resolve ({_SELECTOR_GRAMMAR})")


def _old_spellings(commands: Commands, case: Commands) -> None:
    """``recon curate evidence`` and ``recon case validate``: runnable, left out of the help's
    lists, each saying first that it is deprecated and what replaced it."""
    old = deprecated("case validate", "validate", cmd_validate)
    validate_arguments(case.hidden("validate", old, "deprecated: use `recon validate`"))
    curate = commands.group("curate", "deprecated: use `recon case`", listed=False)
    old = deprecated("curate evidence", "case evidence", cmd_case_evidence)
    curate.hidden("evidence", old, "deprecated: use `recon case evidence`").add_argument(
        "case", help="case id"
    )
