"""Scripted agent: writes one of the scripted answers to the case it is given.

Usage: ``answer.py faithful|flawed WORKSPACE``. It knows the answers because it is a
script, not a model: ``faithful`` stands in for a strong Candidate (the top of the
ladder), ``flawed`` for a plausible weaker one (wrong spacing, a missing section, a
broken interaction). Answers are discovered, never listed here: every folder
``answers/<case>/`` holds ``brief-title.txt`` (the first line of that case's public
brief, which is how the case is recognised from the workspace) and one folder per kind
of answer, copied over the workspace's ``site/`` (the starter stays underneath, so an
answer ships only the files it writes or changes).
"""

import shutil
import sys
from pathlib import Path

ANSWERS = Path(__file__).resolve().parent / "answers"
KINDS = ("faithful", "flawed")


def find_case(title: str) -> Path:
    """The answer folder whose brief-title.txt names the workspace brief's title."""
    known = {}
    for folder in sorted(p for p in ANSWERS.iterdir() if p.is_dir()):
        marker = folder / "brief-title.txt"
        if marker.is_file():
            known[marker.read_text(encoding="utf-8").strip()] = folder
    if title not in known:
        raise SystemExit(f"scripted answer: no answer for a brief titled {title!r}")
    return known[title]


def main(kind: str, workspace: Path) -> None:
    if kind not in KINDS:
        raise SystemExit(f"scripted answer: kind must be one of {KINDS}, not {kind!r}")
    title = (workspace / "brief.md").read_text(encoding="utf-8").splitlines()[0].strip()
    answer = find_case(title) / kind
    if not answer.is_dir():
        raise SystemExit(f"scripted answer: {answer.parent.name} has no {kind} answer")
    shutil.copytree(answer, workspace / "site", dirs_exist_ok=True)
    files = [p for p in answer.rglob("*") if p.is_file()]
    print("turns: 1")
    print(f"tool_calls: {len(files)}")


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]))
