"""The ``recon`` command (:mod:`recon.commands` holds its commands). Errors print one line
per problem without a traceback; exit 2 means bad input."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from recon.commands.parser import build_parser
from recon.errors import EXIT_BAD_INPUT, ReconError

__all__ = ["build_parser", "main"]


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
