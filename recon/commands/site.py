"""The site commands: ``site diff``."""

from __future__ import annotations

import argparse
from pathlib import Path

from recon.commands.base import Commands
from recon.commands.release import compared
from recon.errors import ConfigError
from recon.store import write_atomic

DIFF_HELP = (
    "render `recon diff A B` as one self-contained HTML page: the chain input → cells → "
    "scores → ranks of every moved score or rank, then the changed inputs, cells by kind, "
    "scores, case scores and attempts; no request outside the file"
)


def cmd_site_diff(args: argparse.Namespace) -> int:
    from recon.site.diff_page import diff_page

    result = compared(args)
    out = Path(args.out) if args.out else Path(f"diff-{result.a}-{result.b}.html")
    if out.is_dir():
        raise ConfigError(f"--out {out}: is a folder; name the HTML file to write")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, diff_page(result))
    moved = len(result.chains)
    what = "identical" if result.identical else f"{moved} moved score(s) or rank(s) explained"
    print(f"wrote {out}: recon diff {result.a} -> {result.b}, {what}")
    return 0


def register(commands: Commands) -> None:
    site = commands.group("site", "static site tools")
    p = site.add("diff", cmd_site_diff, DIFF_HELP)
    p.add_argument("a", help="a manifest.json path, a release folder or id, or <id>@<version>")
    p.add_argument("b", help="a manifest.json path, a release folder or id, or <id>@<version>")
    p.add_argument("--out", help="the HTML file to write (default: diff-<A>-<B>.html)")
    p.add_argument(
        "--tolerance",
        type=float,
        default=1e-9,
        help="float moves up to this count as unchanged (default: 1e-9)",
    )
