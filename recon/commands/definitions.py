"""The commands over the project's definitions: ``validate`` and ``schema``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from recon.commands.base import Commands
from recon.project.loader import Project
from recon.project.settings import Settings

VALIDATE_HELP = (
    "check the project, exit 2 if there is a problem: with no ID, every case, entry and "
    "release definition loads and cross-checks (the first problem stops it), then every "
    "case is checked; with IDs, only those cases; each case's problems are all printed in "
    "one run: files parse, provenance pins the reference, no public file refers to sealed "
    "material, the starter builds offline; then, rendering those cases, the reference is "
    "the fixed point of its grade (every contract state is reached, every region selector "
    "resolves, every sealed assertion passes at every viewport and names one element "
    "unless it says which match it means, every workflow passes), the evidence is what the "
    "reference renders now, every check marked `discriminates: true` fails on the starter "
    "and no preservation check (assertion, or region below thresholds.region_pass) fails "
    "on it already"
)
RENDERED = (
    "; states, regions, assertions at every viewport, workflows, evidence and discrimination "
    "checked on each rendered reference"
)


def cmd_validate(args: argparse.Namespace) -> int:
    from recon.curate.validate import check

    project = Project.open(Path(args.root), Settings.from_env())
    loaded = ""
    if not args.cases:  # the whole project loads first: its first problem, as `doit list` says
        project.validate()
        loaded = f", {len(project.entries)} entr(y/ies), {len(project.releases)} release(s)"
    count = check(project, args.cases, render=args.render)  # every problem of the cases
    print(f"ok: {count} case(s){loaded}{RENDERED if args.render else ''}")
    return 0


def validate_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of ``recon validate`` (and of its old spelling ``recon case validate``)."""
    parser.add_argument("cases", nargs="*", metavar="ID", help="case ids (default: all)")
    parser.add_argument(
        "--no-render",
        dest="render",
        action="store_false",
        help="only the file checks and the starter build (no browser)",
    )


def cmd_schema(args: argparse.Namespace) -> int:
    from recon.model import SCHEMAS

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, model in sorted(SCHEMAS.items()):
        path = out / f"{name}.schema.json"
        path.write_text(json.dumps(model.model_json_schema(), indent=2, sort_keys=True) + "\n")
        print(path)
    return 0


def register(commands: Commands) -> None:
    validate_arguments(commands.add("validate", cmd_validate, VALIDATE_HELP))
    schema = commands.add("schema", cmd_schema, "write the JSON Schema of every file format")
    schema.add_argument("--out", default="schemas", help="output folder (default: schemas/)")
