"""What every command module shares: the handler type, the sub-command table, deprecation.

A handler takes the parsed arguments and returns the exit code; a :class:`ReconError` it
raises is printed by :func:`recon.cli.main` as one line per problem.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from recon.project.loader import Project
from recon.project.settings import Settings

Handler = Callable[[argparse.Namespace], int]
"""A command: the parsed arguments in, the exit code out."""


class Commands:
    """The sub-commands of one parser (``recon`` or one of its groups)."""

    def __init__(self, parser: argparse.ArgumentParser, dest: str, metavar: str) -> None:
        self._sub = parser.add_subparsers(dest=dest, required=True, metavar=metavar)

    def add(self, name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        """A command listed in the help."""
        return self._command(name, handler, help_text, listed=True)

    def hidden(self, name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        """A command left out of the help's list (a deprecated spelling), still runnable
        and with its own ``--help``."""
        return self._command(name, handler, help_text, listed=False)

    def group(self, name: str, help_text: str, *, listed: bool = True) -> Commands:
        """A group of sub-commands (``recon case ACTION``)."""
        return Commands(self._parser(name, help_text, listed), f"{name}_command", "ACTION")

    def _command(
        self, name: str, handler: Handler, help_text: str, *, listed: bool
    ) -> argparse.ArgumentParser:
        parser = self._parser(name, help_text, listed)
        parser.set_defaults(handler=handler)
        return parser

    def _parser(self, name: str, help_text: str, listed: bool) -> argparse.ArgumentParser:
        if listed:
            return self._sub.add_parser(name, help=help_text, description=help_text)
        return self._sub.add_parser(name, description=help_text)  # no help: not listed


def deprecated(old: str, new: str, handler: Handler) -> Handler:
    """``handler`` under its old spelling: one line to stderr naming the new one, then the
    same run."""

    def run(args: argparse.Namespace) -> int:
        print(f"recon: `recon {old}` is deprecated; use `recon {new}`", file=sys.stderr)
        return handler(args)

    return run


def open_project(args: argparse.Namespace) -> Project:
    """The project at ``--root``, every case, entry and release definition loaded."""
    project = Project.open(Path(args.root), Settings.from_env())
    project.validate()
    return project
