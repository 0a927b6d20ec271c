"""The ``recon`` argument parser: one table of commands, each module adding its own."""

from __future__ import annotations

import argparse

from recon.commands import build, calibrate, case, definitions, release, site, store
from recon.commands.base import Commands

DESCRIPTION = (
    "recon — the ReconBench harness. Build releases with `doit release:<id>`; these commands "
    "validate, inspect, compare and calibrate them."
)
EPILOG = (
    "exit codes: 0 ok; 1 a run failure; 2 bad input (one line naming the file, field or "
    "setting); 75 a `doit release:<id> executor=ray` build stopped because no live node "
    "offered what a cell needs for give_up_s (finished cells are kept: run it again to resume)"
)
MODULES = (definitions, store, release, build, case, site, calibrate)
"""In the order of ``recon --help``."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="recon", description=DESCRIPTION, epilog=EPILOG)
    parser.add_argument("--root", default=".", help="project root (default: current folder)")
    commands = Commands(parser, "command", "COMMAND")
    for module in MODULES:
        module.register(commands)
    return parser
