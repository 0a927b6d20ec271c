"""The site commands of ``recon``: ``site diff``.

Kept apart from :mod:`recon.cli`, which calls :func:`register` once.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from recon.errors import ConfigError
from recon.store import write_atomic

Handler = Callable[[argparse.Namespace], int]
Add = Callable[[str, Handler, str], argparse.ArgumentParser]
DIFF_HELP = (
    "render `recon diff A B` as one self-contained HTML page: the chain input → cells → "
    "scores → ranks of every moved score or rank, then the changed inputs, cells by kind, "
    "scores, case scores and attempts; no request outside the file"
)


def cmd_site_diff(args: argparse.Namespace) -> int:
    from recon.release.diff import diff, load_side
    from recon.release.tries import store_reader, tries_of
    from recon.site.diff_page import diff_page

    root = Path(args.root)
    a = load_side(args.a, root)
    b = load_side(args.b, root)
    read = store_reader(root)  # each slot's earlier tries, from their records
    tries = (tries_of(a[1], read), tries_of(b[1], read))
    result = diff(a[0], a[1], b[0], b[1], tolerance=args.tolerance, tries=tries)
    out = Path(args.out) if args.out else Path(f"diff-{result.a}-{result.b}.html")
    if out.is_dir():
        raise ConfigError(f"--out {out}: is a folder; name the HTML file to write")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, diff_page(result))
    moved = len(result.chains)
    what = "identical" if result.identical else f"{moved} moved score(s) or rank(s) explained"
    print(f"wrote {out}: recon diff {result.a} -> {result.b}, {what}")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser], add: Add) -> None:
    site = add("site", lambda a: 0, "static site tools")
    actions = site.add_subparsers(dest="site_command", required=True, metavar="ACTION")
    p = actions.add_parser("diff", help=DIFF_HELP, description=DIFF_HELP)
    p.add_argument("a", help="a manifest.json path, a release folder or id, or <id>@<version>")
    p.add_argument("b", help="a manifest.json path, a release folder or id, or <id>@<version>")
    p.add_argument("--out", help="the HTML file to write (default: diff-<A>-<B>.html)")
    p.add_argument(
        "--tolerance",
        type=float,
        default=1e-9,
        help="float moves up to this count as unchanged (default: 1e-9)",
    )
    p.set_defaults(handler=cmd_site_diff)
