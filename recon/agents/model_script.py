"""What the scripted model says for one case: the case's answer, written through bash.

A pure function of the answer folder. The first turn reads the brief and lists the
workspace, as an agent would; then every file of the answer is written under ``site/``
(relative to the workspace, where the agent runs its commands), text with a quoted
heredoc, anything a heredoc cannot carry (bytes that are not UTF-8 text, no final newline,
a very long line, a fence or the heredoc's delimiter) as base64. A file bigger than one
command may carry (the kernel refuses a single argument over 128 KiB, and ``sh -c`` gets
the whole command as one) is written in chunks, appended. The last turn submits.
"""

from __future__ import annotations

import base64
import shlex
from pathlib import Path

SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
DELIMITER = "RECON_SCRIPTED_EOF"
CHUNK = 60_000
"""Bytes of a file per command: its base64 form stays well under 128 KiB."""
LONGEST_LINE = 4_096


def case_replies(answer: Path) -> list[str]:
    """Every reply of the script for the answer folder ``answer``, in order."""
    replies = [_reply("read the brief and look at the starter.", "head -n 5 brief.md && ls")]
    for path in sorted(p for p in answer.rglob("*") if p.is_file()):
        rel = path.relative_to(answer).as_posix()
        for i, command in enumerate(write_commands(f"site/{rel}", path.read_bytes())):
            replies.append(_reply(f"write site/{rel} (part {i + 1}).", command))
    replies.append(_reply("the page is written; submit.", SUBMIT))
    return replies


def write_commands(target: str, data: bytes) -> list[str]:
    """Shell commands that write ``data`` to ``target`` (relative), creating its folder."""
    folder = shlex.quote(str(Path(target).parent))
    quoted = shlex.quote(target)
    text = _heredoc_text(data)
    pieces = _text_chunks(text) if text is not None else _byte_chunks(data)
    commands = []
    for i, piece in enumerate(pieces):
        redirect = ">" if i == 0 else ">>"
        if text is not None:
            body = f"cat {redirect} {quoted} <<'{DELIMITER}'\n{piece}{DELIMITER}"
        else:
            encoded = base64.encodebytes(piece.encode("latin-1")).decode("ascii")
            body = f"base64 -d {redirect} {quoted} <<'{DELIMITER}'\n{encoded}{DELIMITER}"
        commands.append(f"mkdir -p {folder} && {body}" if i == 0 else body)
    return commands or [f"mkdir -p {folder} && : > {quoted}"]


def _heredoc_text(data: bytes) -> str | None:
    """``data`` as text a quoted heredoc reproduces byte for byte, else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    lines = text.split("\n")
    if not text.endswith("\n") or "```" in text or "\r" in text:
        return None
    if DELIMITER in lines or max(len(line) for line in lines) > LONGEST_LINE:
        return None
    return text


def _text_chunks(text: str) -> list[str]:
    """Whole lines, at most ``CHUNK`` characters a chunk (a line is at most 4 KiB)."""
    chunks: list[str] = []
    current = ""
    for line in text.splitlines(keepends=True):
        if current and len(current) + len(line) > CHUNK:
            chunks.append(current)
            current = ""
        current += line
    return [*chunks, current] if current else chunks


def _byte_chunks(data: bytes) -> list[str]:
    """``data`` in ``CHUNK``-byte pieces, as latin-1 strings (one char a byte)."""
    return [data[i : i + CHUNK].decode("latin-1") for i in range(0, len(data), CHUNK)]


def _reply(thought: str, command: str) -> str:
    return f"THOUGHT: {thought}\n\n```bash\n{command}\n```"
