"""The Gemini CLI pieces, pure: its dialect of the tool script (``run_shell_command`` and
``write_file``) played against a workspace on disk writes every case's faithful answer; its
Gemini replies streamed and not say the same thing; its ``--output-format json`` report
gives the trace."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from recon.agents.model_script import write_commands
from recon.agents.scripted import ANSWERS, KIND
from recon.agents.tool_script import (
    FINISHED,
    GEMINI_REFUSES,
    LOOK,
    Looked,
    ToolScripts,
    Write,
    gemini_command,
    plan,
    shell_output,
)
from recon.agents.trace import gemini_cli
from recon.gateway.assemble import assemble
from recon.gateway.conversation import reply_count
from recon.gateway.protocols import Call
from recon.gateway.sse import SseParser
from recon.gateway.turns import reply
from recon.gateway.upstream import scripted_answer
from recon.model import Trace
from tests.agents.test_tool_script import _drain, _NoText, _tree

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = ToolScripts.from_answers(REPO / "entries" / ANSWERS, KIND)
DECLARED = ("list_directory", "read_file", "replace", "write_file", "run_shell_command")
TOOLS = [{"functionDeclarations": [{"name": n, "parametersJsonSchema": {}} for n in DECLARED]}]
CONTEXT = "<session_context>\nThis is the Gemini CLI. We are setting up the context.\n"


def _wrapped(output: str) -> str:
    """A ``run_shell_command`` result as Gemini CLI 0.61.0 words it."""
    return f"<untrusted_context>\nOutput: {output}\nProcess Group PGID: 41\n</untrusted_context>"


def _request(task: str, contents: list[dict[str, Any]]) -> dict[str, Any]:
    """A request as Gemini CLI sends it: its session context, the prompt, the turns."""
    said = [{"role": "user", "parts": [{"text": CONTEXT}]},
            {"role": "user", "parts": [{"text": task}]}]  # fmt: skip
    return {"contents": said + contents, "tools": TOOLS, "systemInstruction": {"parts": []}}


def _play(case: str, workspace: Path) -> tuple[list[str], str]:
    """Gemini CLI's side of the conversation: the tools it was told to call, in order, and
    the final text."""
    shutil.copytree(REPO / "cases" / case / "public" / "starter", workspace)
    shutil.copy2(REPO / "cases" / case / "public" / "brief.md", workspace / "brief.md")
    task = (workspace / "brief.md").read_text()
    contents: list[dict[str, Any]] = []
    used: list[str] = []
    for _ in range(200):
        said = SCRIPTS.reply("gemini", _request(task, contents))
        assert said is not None
        if not said.calls:
            return used, said.text
        for call in said.calls:
            used.append(call.name)
            if call.name == "run_shell_command" and GEMINI_REFUSES.search(call.input["command"]):
                raise AssertionError(f"Gemini CLI refuses this command: {call.input['command']!r}")
            if call.name == "run_shell_command":
                proc = subprocess.run(["bash", "-c", call.input["command"]], cwd=workspace,
                                      capture_output=True, text=True, check=True)  # fmt: skip
                out = _wrapped(proc.stdout.rstrip("\n") or "(empty)")
            else:
                assert call.name == "write_file" and set(call.input) == {"file_path", "content"}
                path = Path(call.input["file_path"])
                assert path.is_absolute() and not path.exists()
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(call.input["content"])
                out = f"Successfully created and wrote to new file: {path}."
            asked = {"functionCall": {"id": call.id, "name": call.name, "args": call.input}}
            answer = {"id": call.id, "name": call.name, "response": {"output": out}}
            contents += [{"role": "model", "parts": [asked]},
                         {"role": "user", "parts": [{"functionResponse": answer}]}]  # fmt: skip
    raise AssertionError("the script never finished")


@pytest.mark.parametrize("case", sorted(p.name for p in (REPO / "cases").iterdir()))
def test_the_gemini_conversation_writes_the_faithful_answer_byte_for_byte(
    case: str, tmp_path: Path
) -> None:
    used, final = _play(case, tmp_path / "ws")
    answer = REPO / "entries" / ANSWERS / case / KIND
    site = _tree(tmp_path / "ws" / "site")
    assert {k: v for k, v in site.items() if k in _tree(answer)} == _tree(answer)
    assert used[0] == "run_shell_command" and final == FINISHED
    starter = REPO / "cases" / case / "public" / "starter"
    looked = Looked("/w", frozenset(f"site/{n}" for n in _tree(starter / "site")))
    writes = sum(isinstance(a, Write) for a in plan(_tree(answer), looked))
    assert used.count("write_file") == writes


def test_a_result_is_the_output_section_of_the_shell_result() -> None:
    assert shell_output(_wrapped("/sandbox/work\n# Brief\nsite/a.html")) == (
        "/sandbox/work\n# Brief\nsite/a.html"
    )
    with_exit = "<untrusted_context>\nOutput: x\ny\nExit Code: 1\n</untrusted_context>"
    assert shell_output(with_exit) == "x\ny"
    assert shell_output("Successfully created and wrote to new file: /w/a.") == (
        "Successfully created and wrote to new file: /w/a."
    )
    assert Looked.parse(shell_output(_wrapped("/w\nsite/i.html"))) == Looked(
        "/w", frozenset({"site/i.html"})
    )


@pytest.mark.parametrize("text", ["a `b` && $(c)\n", "x && y <(z)\n\u00e9\n"])
def test_a_heredoc_gemini_would_refuse_goes_through_base64_with_the_same_bytes(
    text: str, tmp_path: Path
) -> None:
    data = text.encode()
    (first,) = write_commands("site/a.js", data)
    for command in (first, first.partition(" && ")[2].replace("cat >", "cat >>")):
        said = gemini_command(command)
        assert not GEMINI_REFUSES.search(said) and "base64 -d" in said
        (tmp_path / "site").mkdir(exist_ok=True)
        (tmp_path / "site" / "a.js").write_bytes(b"")
        subprocess.run(["bash", "-c", said], cwd=tmp_path, check=True)
        assert (tmp_path / "site" / "a.js").read_bytes() == data
    assert gemini_command("ls -la") == "ls -la"


def test_it_answers_gemini_cli_only_and_known_cases_only() -> None:
    body = _request(next(iter(SCRIPTS.by_title)), [])
    assert SCRIPTS.reply("gemini", body) is not None
    assert SCRIPTS.reply("anthropic", body) is None
    one_tool = [{"functionDeclarations": [{"name": "run_shell_command"}]}]
    assert SCRIPTS.reply("gemini", {**body, "tools": one_tool}) is None
    assert SCRIPTS.reply("gemini", _request("no case here", [])) is None


@pytest.mark.parametrize("step", [0, 1])
def test_streamed_and_unstreamed_function_calls_are_one_reply(step: int) -> None:
    """The first reply (a shell call) and, after its result, the next one: the same
    candidate and usage streamed (``alt=sse``) and not, read back as the same calls."""
    task = next(iter(SCRIPTS.by_title))
    contents: list[dict[str, Any]] = []
    if step:
        asked = {"functionCall": {"name": "run_shell_command", "args": {"command": LOOK}}}
        answer = {"name": "run_shell_command", "response": {"output": _wrapped("/w")}}
        contents = [{"role": "model", "parts": [asked]},
                    {"role": "user", "parts": [{"functionResponse": answer}]}]  # fmt: skip
    body = _request(task, contents)
    shapes = []
    for stream in (False, True):
        call = Call("gemini", "generate", "gemini-2.5-pro", stream)
        answer_ = scripted_answer(_NoText(), call, body, 7, SCRIPTS)
        data = b"".join(_drain(answer_.chunks))
        shapes.append(assemble("gemini", SseParser().feed(data)) if stream else json.loads(data))
    plain, streamed = shapes
    (candidate,) = plain["candidates"]
    assert candidate == streamed["candidates"][0] and candidate["finishReason"] == "STOP"
    assert plain["usageMetadata"] == streamed["usageMetadata"]
    assert plain["usageMetadata"]["totalTokenCount"] > plain["usageMetadata"]["promptTokenCount"]
    (part,) = candidate["content"]["parts"]
    assert set(part) == {"functionCall"} and "id" not in part["functionCall"]
    read = reply("gemini", plain)
    assert [c.name for c in read.calls] == [("run_shell_command", "write_file")[step]]
    assert reply_count("gemini", body) == step


STATS = {
    "session_id": "73221889",
    "response": "All done.",
    "stats": {
        "models": {
            "gemini-2.5-pro": {"api": {"totalRequests": 3, "totalErrors": 0},
                               "tokens": {"input": 300, "candidates": 30, "total": 330}},
            "gemini-2.5-flash": {"api": {"totalRequests": 1}, "tokens": {"total": 12}},
        },
        "tools": {"totalCalls": 2, "totalSuccess": 2},
    },
}  # fmt: skip


def test_the_gemini_trace_counts_requests_tool_calls_and_tokens() -> None:
    log = b"YOLO mode is enabled.\n" + json.dumps(STATS, indent=2).encode() + b"\nbye\n"
    assert gemini_cli(log, b"") == Trace(turns=4, tool_calls=2, tokens=342)
    assert gemini_cli(b"no json\n{broken\n", b"") == Trace()
    failed = {"session_id": "x", "error": {"type": "Error", "message": "Invalid auth method"}}
    assert gemini_cli(json.dumps(failed, indent=2).encode(), b"") == Trace()
