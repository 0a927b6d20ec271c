"""The tool script (pure): Claude Code's conversation, played against a workspace on disk
(Bash through ``sh``, Write as a file write), writes every case's faithful answer byte for
byte; its replies in the Anthropic shape, streamed and not, say the same thing."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from recon.agents.scripted import ANSWERS, KIND
from recon.agents.tool_script import (
    FINISHED,
    LOOK,
    Finish,
    Looked,
    Run,
    ToolScripts,
    Write,
    plan,
    writable,
)
from recon.gateway.assemble import assemble
from recon.gateway.protocols import Call
from recon.gateway.sse import SseParser
from recon.gateway.upstream import scripted_answer

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = ToolScripts.from_answers(REPO / "entries" / ANSWERS, KIND)
TOOLS = [{"name": "Bash", "input_schema": {}}, {"name": "Write", "input_schema": {}}]


def _play(case: str, workspace: Path) -> tuple[list[str], str]:
    """Claude Code's side of the conversation: the tools it was told to call, in order, and
    the final text."""
    shutil.copytree(REPO / "cases" / case / "public" / "starter", workspace)
    shutil.copy2(REPO / "cases" / case / "public" / "brief.md", workspace / "brief.md")
    brief = (workspace / "brief.md").read_text()
    body: dict[str, Any] = {"tools": TOOLS, "messages": [{"role": "user", "content": brief}]}
    used: list[str] = []
    for _ in range(200):
        reply = SCRIPTS.reply("anthropic", body)
        assert reply is not None
        if not reply.calls:
            return used, reply.text
        results = []
        for call in reply.calls:
            used.append(call.name)
            if call.name == "Bash":
                proc = subprocess.run(["sh", "-c", call.input["command"]], cwd=workspace,
                                      capture_output=True, text=True, check=True)  # fmt: skip
                out = proc.stdout
            else:
                path = Path(call.input["file_path"])
                assert path.is_absolute() and not path.exists()  # Write makes new files only
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(call.input["content"])
                out = f"File created successfully at: {path}"
            results.append({"type": "tool_result", "tool_use_id": call.id,
                            "content": [{"type": "text", "text": out}]})  # fmt: skip
        uses = [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.input}
                for c in reply.calls]  # fmt: skip
        body["messages"] += [
            {"role": "assistant", "content": uses},
            {"role": "user", "content": results},
        ]
    raise AssertionError("the script never finished")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("case", sorted(p.name for p in (REPO / "cases").iterdir()))
def test_the_conversation_writes_the_faithful_answer_byte_for_byte(
    case: str, tmp_path: Path
) -> None:
    used, final = _play(case, tmp_path / "ws")
    answer = REPO / "entries" / ANSWERS / case / KIND
    site = _tree(tmp_path / "ws" / "site")
    assert {k: v for k, v in site.items() if k in _tree(answer)} == _tree(answer)
    assert used[0] == "Bash" and final == FINISHED


def test_new_small_text_files_go_through_write_the_rest_through_bash(tmp_path: Path) -> None:
    files = {"new.css": b"a {}\n", "index.html": b"<p>x</p>\n", "blank.txt": b"a\n   \nb\n",
             "logo.png": b"\x89PNG\x00", "big.js": b"x;\n" * 4000}  # fmt: skip
    before = plan(files, None)
    assert before[0] == Run(LOOK, "Look at the brief and the starter")
    assert not any(isinstance(a, Write) for a in before)  # no cwd yet: nothing to Write to
    looked = Looked.parse("/sandbox/work\n# Brief\nsite/index.html\n")
    assert looked == Looked("/sandbox/work", frozenset({"site/index.html"}))
    actions = plan(files, looked)
    writes = [a.path for a in actions if isinstance(a, Write)]
    assert writes == ["site/new.css"]  # existing, blank-line, binary and big ones: Bash
    runs = [a.note for a in actions[1:] if isinstance(a, Run)]
    assert runs == [f"Write site/{n} (part 1)" for n in ("big.js", "blank.txt", "index.html",
                                                        "logo.png")]  # fmt: skip
    assert actions[-1] == Finish(FINISHED)
    assert writable(b"ok\n") and not writable(b"ok") and not writable(b"a \n")


def test_it_answers_claude_code_only_and_known_cases_only() -> None:
    title = next(iter(SCRIPTS.by_title))
    claude = {"tools": TOOLS, "messages": [{"role": "user", "content": f"# {title}\n"}]}
    assert SCRIPTS.reply("anthropic", claude) is not None
    assert SCRIPTS.reply("chat", claude) is None
    assert SCRIPTS.reply("anthropic", {**claude, "tools": TOOLS[:1]}) is None
    unknown = [{"role": "user", "content": "no case"}]
    assert SCRIPTS.reply("anthropic", {**claude, "messages": unknown}) is None


def test_streamed_and_unstreamed_tool_replies_are_one_message() -> None:
    title = next(iter(SCRIPTS.by_title))
    body = {"model": "m", "tools": TOOLS, "messages": [{"role": "user", "content": title}]}
    shapes = []
    for stream in (False, True):
        call = Call("anthropic", "generate", "m", stream)
        reply = scripted_answer(_NoText(), call, body, 7, SCRIPTS)
        data = b"".join(_drain(reply.chunks))
        parser = SseParser()
        shapes.append(assemble("anthropic", parser.feed(data)) if stream else json.loads(data))
    plain, streamed = shapes
    assert plain["stop_reason"] == streamed["stop_reason"] == "tool_use"
    assert plain["content"] == streamed["content"]
    (use,) = plain["content"]
    assert use["name"] == "Bash" and use["input"]["command"] == LOOK
    assert plain["usage"] == streamed["usage"] and plain["usage"]["output_tokens"] > 1


class _NoText:
    def reply(self, request: dict[str, Any]) -> str | None:
        raise AssertionError("a tool-speaking request reached the text script")


def _drain(chunks: Any) -> list[bytes]:
    async def read() -> list[bytes]:
        return [c async for c in chunks]

    return asyncio.run(read())
