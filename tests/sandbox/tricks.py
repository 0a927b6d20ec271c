"""What a hostile Candidate may leave in its build output, one trick each, and what the
harness must make of it: shared by the unit, native, docker and release tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recon.model import Budget

FILES = 50  # the caps of every trick run: budget.output_files, budget.output_depth
DEPTH = 8
FILE_BYTES = 1024 * 1024  # the docker tests' per-file cap (file_cap_mb=1)
INDEX = "<h1>hi</h1>"


@dataclass(frozen=True)
class Trick:
    name: str
    code: str  # Python, run in the output folder once index.html is written
    refusals: tuple[str, ...] = ()  # ``{out}`` is the output folder; empty: normalised
    files: tuple[str, ...] = ()  # a normalised output's files (each a copy of INDEX but css)
    native: bool = True  # the native backend can produce it (its file cap is its disk)

    def expected(self, out: str) -> list[str]:
        return [r.format(out=out) for r in self.refusals]


TRICKS = [
    Trick(
        "non-utf8-name",
        "open(os.fsdecode(b'bad\\xff.html'), 'w').write('x')",
        ("{out}/bad\\xff.html: name is not valid UTF-8",),
    ),
    Trick(
        "control-char-name",
        "open('line\\nbreak.html', 'w').write('x')",
        ("{out}/line\\nbreak.html: name holds a control character",),
    ),
    Trick(
        "symlink-to-file",
        "os.symlink('index.html', 'alias.html')",
        files=("alias.html", "index.html"),
    ),
    Trick(
        "symlink-to-folder",
        "os.mkdir('css'); open('css/a.css', 'w').write('h1{}'); os.symlink('css', 'styles')",
        files=("css/a.css", "index.html", "styles/a.css"),
    ),
    Trick(
        "symlink-outside",
        "os.symlink('../brief.md', 'brief.md')",
        ("{out}/brief.md: link to ../brief.md leads outside the output",),
    ),
    Trick(
        "symlink-absolute",
        "os.symlink('/etc/passwd', 'passwd')",
        ("{out}/passwd: link to /etc/passwd is absolute",),
    ),
    Trick(
        "symlink-dangling",
        "os.symlink('gone.html', 'gone')",
        ("{out}/gone: link to gone.html names nothing in the output",),
    ),
    Trick(
        "symlink-cycle",
        "os.symlink('b', 'a'); os.symlink('a', 'b')",
        ("{out}/a: link to b makes a cycle", "{out}/b: link to a makes a cycle"),
    ),
    Trick(
        "symlink-folder-cycle",
        "os.mkdir('sub'); os.symlink('..', 'sub/up')",
        ("{out}/sub/up: link to .. makes a cycle",),
    ),
    Trick(
        "hard-link",
        "os.link('index.html', 'hard.html')",
        files=("hard.html", "index.html"),
    ),
    Trick("fifo", "os.mkfifo('pipe')", ("{out}/pipe: fifo refused",)),
    Trick(
        "socket",
        "import socket; socket.socket(socket.AF_UNIX).bind('sock')",
        ("{out}/sock: socket refused",),
    ),
    Trick(
        "too-many",
        f"[open(f'f{{i}}', 'w').close() for i in range({FILES})]",
        (f"{{out}}: more than {FILES} files and folders; budget.output_files is {FILES}",),
    ),
    Trick(
        "too-deep",
        f"os.makedirs('/'.join(['d'] * {DEPTH + 1}))",
        (f"{{out}}: a path more than {DEPTH} levels deep; budget.output_depth is {DEPTH}",),
    ),
    Trick(
        "too-big",
        f"open('big', 'wb').write(b'x' * {FILE_BYTES + 1})",
        (f"{{out}}/big: {FILE_BYTES + 1} bytes is over the per-file cap of {FILE_BYTES}",),
        native=False,
    ),
]
BY_NAME = {t.name: t for t in TRICKS}


def agent(trick: Trick, out: str) -> str:
    """An agent (``python3 agent.py WORKSPACE``) that builds ``out/`` with ``trick`` in it."""
    return (
        "import os, sys\n"
        f"os.makedirs(os.path.join(sys.argv[1], {out!r}), exist_ok=True)\n"
        f"os.chdir(os.path.join(sys.argv[1], {out!r}))\n"
        f"open('index.html', 'w').write({INDEX!r})\n"
        f"{trick.code}\n"
    )


def names_first(reason: str, refusal: str) -> bool:
    """The reason names the first refused path, or the budget cap broken (by its field)."""
    if "budget." in refusal:
        return refusal.rsplit("; ", 1)[1].split()[0] in reason
    return reason.startswith(f"the build output was refused: {refusal}")


def capped(budget: Budget) -> Budget:
    return budget.model_copy(update={"output_files": FILES, "output_depth": DEPTH})


def check_attempt(run: Any, trick: Trick, out: str) -> None:
    """What any backend must make of ``trick`` written into ``out/``: a valid attempt with
    exactly its files and no link, or an ungradeable one naming the first refusal first."""
    if not trick.refusals:
        assert run.outcome == "valid", (run.reason, run.refusals)
        output: Path = run.output
        assert output is not None and run.refusals == []
        found = sorted(str(p.relative_to(output)) for p in output.rglob("*") if p.is_file())
        assert found == list(trick.files)
        assert not [p for p in output.rglob("*") if p.is_symlink()]
        assert (output / "index.html").read_text() == INDEX
        return
    expected = trick.expected(out)
    assert (run.outcome, run.output, run.refusals) == ("ungradeable", None, expected), run.reason
    assert names_first(run.reason, expected[0])
