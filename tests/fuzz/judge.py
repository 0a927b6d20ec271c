"""Judge corpus files one by one, in one process: ``python -m tests.fuzz.judge PROJECT PATH...``.

For each corpus path (relative to ``tests/fuzz/corpus``) the judge puts the malformed file
in place of its target in the project copy, runs what ``recon validate --no-render`` and
``doit list`` run (``recon.cli.main`` and ``doit``'s ``DoitMain``, with the project as the
current folder and a freshly imported ``dodo.py``), restores the file, and prints one JSON
line: each command's exit code and output, a traceback if an exception escaped, and the
seconds it took. Starting Python once for many files keeps the corpus test fast; nothing
carries over from one file to the next (a new ``Project`` and a new dodo module per run).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parent / "corpus"


def _capture(run: Callable[[], int | None]) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    started = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = run()
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException:  # what the real command would print as a traceback
            traceback.print_exc()
            code = 1
    return {
        "code": code or 0,
        "stdout": out.getvalue(),
        "stderr": err.getvalue(),
        "seconds": round(time.perf_counter() - started, 4),
    }


def _validate(project: Path) -> int:
    from recon.cli import main

    return main(["--root", str(project), "validate", "--no-render"])


def _doit_list() -> int:
    from doit.doit_cmd import DoitMain

    sys.modules.pop("dodo", None)  # every run imports the project's dodo.py afresh
    return int(DoitMain().run(["list"]))


def judge(project: Path, rel: str) -> dict[str, Any]:
    entry = json.loads((CORPUS / "index.json").read_text())[rel]
    target = project / entry["target"]
    original = target.read_bytes()
    target.write_bytes((CORPUS / rel).read_bytes())
    here = Path.cwd()
    os.chdir(project)
    try:
        return {
            "path": rel,
            "validate": _capture(lambda: _validate(project)),
            "doit_list": _capture(_doit_list),
        }
    finally:
        os.chdir(here)
        target.write_bytes(original)


def _warm() -> None:
    """Import once what every run needs, so a file's time is its own work, not start-up."""
    import doit.doit_cmd  # noqa: F401

    import recon.cli  # noqa: F401
    from recon.pipeline import Pipeline  # noqa: F401


def main(argv: list[str]) -> int:
    project = Path(argv[0]).resolve()
    _warm()
    for rel in argv[1:]:
        print(json.dumps(judge(project, rel), sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
