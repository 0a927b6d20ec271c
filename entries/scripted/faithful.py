"""Scripted demo agent: writes a faithful reconstruction of the case it is given.

It knows the answers because it is a script, not a model: it stands in for a strong
Candidate so the demo release has a top of the ladder. The case is recognised from the
brief's title in the workspace (public material only); each answer is a folder under
``answers/<case>/`` that is copied into the workspace's ``site/``.
"""

import shutil
import sys
from pathlib import Path

ANSWERS = Path(__file__).resolve().parent / "answers"
BY_BRIEF_TITLE = {
    "# Brief: HTML5 Boilerplate starter page": "html5-boilerplate",
    "# Brief: TodoMVC todo list": "todomvc",
}

workspace = Path(sys.argv[1])
title = (workspace / "brief.md").read_text(encoding="utf-8").splitlines()[0].strip()
if title not in BY_BRIEF_TITLE:
    raise SystemExit(f"scripted faithful: no answer for a brief titled {title!r}")
answer = ANSWERS / BY_BRIEF_TITLE[title]
site = workspace / "site"
shutil.copytree(answer, site, dirs_exist_ok=True)
files = [p for p in answer.rglob("*") if p.is_file()]
print("turns: 1")
print(f"tool_calls: {len(files)}")
