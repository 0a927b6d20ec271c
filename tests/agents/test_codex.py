"""The Codex CLI pieces, pure: its dialect of the tool script (``exec_command``, and
``apply_patch`` through it) played against a workspace on disk writes every case's faithful
answer; its Responses replies streamed and not say the same thing; its ``--json`` events
give the trace; entries/codex-scripted.yaml is entries/codex-cli.yaml but for the model."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from recon.agents.scripted import ANSWERS, KIND
from recon.agents.tool_script import (
    FINISHED,
    LOOK,
    PATCH_END,
    Looked,
    ToolScripts,
    Write,
    command_output,
    patch_command,
    plan,
)
from recon.agents.trace import codex
from recon.gateway.assemble import assemble
from recon.gateway.conversation import reply_count
from recon.gateway.protocols import Call
from recon.gateway.sse import SseParser
from recon.gateway.turns import reply
from recon.gateway.upstream import scripted_answer
from recon.sandbox import ImageRecipe
from tests.agents.test_tool_script import _drain, _NoText, _tree

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = ToolScripts.from_answers(REPO / "entries" / ANSWERS, KIND)
TOOLS = [{"type": "function", "name": n} for n in ("exec_command", "write_stdin", "view_image")]
HEADER = "Chunk ID: 87b710\nWall time: 0.5060 seconds\nProcess exited with code 0\n"
PATCH = re.compile(rf"apply_patch <<'{PATCH_END}'\n(.*)\n{PATCH_END}", re.DOTALL)


def _request(task: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    """A request as Codex sends it: developer text, the environment, the prompt, the turns."""
    said = [("developer", "You are a coding agent running in the Codex CLI"),
            ("user", "<environment_context>\n  <cwd>/sandbox/work</cwd>\n</environment_context>"),
            ("user", task)]  # fmt: skip
    messages = [{"type": "message", "role": r, "content": [{"type": "input_text", "text": t}]}
                for r, t in said]  # fmt: skip
    return {"model": "gpt-5-codex", "tools": TOOLS, "stream": True, "input": messages + items}


def _apply(patch: str, workspace: Path) -> str:
    """Codex's apply_patch, as far as the script uses it: Add File, each line after a +."""
    lines = patch.split("\n")
    assert lines[0] == "*** Begin Patch" and lines[-1] == "*** End Patch"
    (path,) = [line.removeprefix("*** Add File: ") for line in lines if line.startswith("*** Add")]
    assert all(line.startswith("+") for line in lines[2:-1])
    target = workspace / path
    assert not target.exists()  # Add File makes new files only
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(f"{line[1:]}\n" for line in lines[2:-1]))
    return f"Wall time: 0.0000 seconds\nOutput:\nSuccess. Updated the following files:\nA {path}\n"


def _play(case: str, workspace: Path) -> tuple[list[str], str]:
    """Codex's side of the conversation: what each call did (``sh`` or ``patch``), in order,
    and the final message."""
    shutil.copytree(REPO / "cases" / case / "public" / "starter", workspace)
    shutil.copy2(REPO / "cases" / case / "public" / "brief.md", workspace / "brief.md")
    items: list[dict[str, Any]] = []
    done: list[str] = []
    for _ in range(200):
        said = SCRIPTS.reply("responses", _request((workspace / "brief.md").read_text(), items))
        assert said is not None
        if not said.calls:
            return done, said.text
        for call in said.calls:
            assert call.name == "exec_command" and set(call.input) == {"cmd"}
            patch = PATCH.fullmatch(call.input["cmd"])
            if patch is not None:
                out, kind = _apply(patch.group(1), workspace), "patch"
            else:
                proc = subprocess.run(["bash", "-c", call.input["cmd"]], cwd=workspace,
                                      capture_output=True, text=True, check=True)  # fmt: skip
                out, kind = f"{HEADER}Original token count: 9\nOutput:\n{proc.stdout}", "sh"
            done.append(kind)
            asked = {"type": "function_call", "name": call.name, "call_id": call.id,
                     "arguments": json.dumps(call.input)}  # fmt: skip
            items += [asked, {"type": "function_call_output", "call_id": call.id, "output": out}]
    raise AssertionError("the script never finished")


@pytest.mark.parametrize("case", sorted(p.name for p in (REPO / "cases").iterdir()))
def test_the_codex_conversation_writes_the_faithful_answer_byte_for_byte(
    case: str, tmp_path: Path
) -> None:
    done, final = _play(case, tmp_path / "ws")
    answer = REPO / "entries" / ANSWERS / case / KIND
    site = _tree(tmp_path / "ws" / "site")
    assert {k: v for k, v in site.items() if k in _tree(answer)} == _tree(answer)
    assert done[0] == "sh" and final == FINISHED
    # each file the plan writes with the agent's file tool went in as a patch, the rest by sh
    starter = REPO / "cases" / case / "public" / "starter"
    looked = Looked("/w", frozenset(f"site/{n}" for n in _tree(starter / "site")))
    writes = sum(isinstance(a, Write) for a in plan(_tree(answer), looked))
    assert done.count("patch") == writes and len(done) == len(plan(_tree(answer), looked)) - 1


def test_results_are_the_output_after_codex_header() -> None:
    assert (
        command_output(f"{HEADER}Original token count: 3\nOutput:\n/w\nsite/a\n") == "/w\nsite/a\n"
    )
    assert command_output("Output:\nnot a header line\n") == "Output:\nnot a header line\n"
    assert command_output("plain text") == "plain text"
    looked = SCRIPTS.reply(
        "responses",
        _request(next(iter(SCRIPTS.by_title)), [
            {"type": "function_call", "name": "exec_command", "call_id": "c0", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c0",
             "output": f"{HEADER}Output:\n/sandbox/work\n# Brief\n"},
        ]),
    )  # fmt: skip
    assert looked is not None and looked.calls[0].input["cmd"].startswith("apply_patch <<")


def test_a_patch_carries_every_line_even_blank_and_starred_ones() -> None:
    text = "a\n\n  b  \n*** End Patch\n"
    command = patch_command("site/x.txt", text)
    patch = PATCH.fullmatch(command)
    assert patch is not None
    lines = ["*** Begin Patch", "*** Add File: site/x.txt", "+a", "+", "+  b  ", "+*** End Patch"]
    assert patch.group(1).split("\n") == [*lines, "*** End Patch"]


def test_it_answers_codex_only_and_known_cases_only() -> None:
    title = next(iter(SCRIPTS.by_title))
    body = _request(f"# {title}\n", [])
    first = SCRIPTS.reply("responses", body)
    assert first is not None and first.calls[0].input == {"cmd": LOOK}
    assert SCRIPTS.reply("chat", body) is None
    assert SCRIPTS.reply("responses", {**body, "tools": TOOLS[1:]}) is None  # no exec_command
    assert SCRIPTS.reply("responses", _request("no case", [])) is None


def test_streamed_and_unstreamed_function_calls_are_one_response() -> None:
    body = _request(next(iter(SCRIPTS.by_title)), [])
    shapes = []
    for stream in (False, True):
        call = Call("responses", "generate", "gpt-5-codex", stream)
        answer = scripted_answer(_NoText(), call, body, 7, SCRIPTS)
        data = b"".join(_drain(answer.chunks))
        shapes.append(assemble("responses", SseParser().feed(data)) if stream else json.loads(data))
    plain, streamed = shapes
    assert plain["output"] == streamed["output"] and plain["usage"] == streamed["usage"]
    (item,) = plain["output"]
    assert item["type"] == "function_call" and item["name"] == "exec_command"
    assert json.loads(item["arguments"]) == {"cmd": LOOK}
    read = reply("responses", plain)
    assert [(c.name, json.loads(c.arguments)) for c in read.calls] == [
        ("exec_command", {"cmd": LOOK})
    ]
    call = Call("responses", "generate", "gpt-5-codex", True)
    sent = SseParser().feed(
        b"".join(_drain(scripted_answer(_NoText(), call, body, 7, SCRIPTS).chunks))
    )
    events = [e.event for e in sent]
    assert events.count("response.function_call_arguments.delta") == 2
    assert events[0] == "response.created" and events[-1] == "response.completed"
    done = [json.loads(e.data)["item"] for e in sent if e.event == "response.output_item.done"]
    assert done == plain["output"]  # what Codex reads, item by item


def test_each_tool_result_ends_a_reply() -> None:
    turn = [{"type": "function_call", "name": "exec_command", "call_id": "c", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": "ok"}]  # fmt: skip
    assert [reply_count("responses", _request("t", turn * n)) for n in (0, 1, 3)] == [0, 1, 3]


JSONL = b"""{"type":"thread.started","thread_id":"01a2"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"no model metadata"}}
{"type":"turn.started"}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"ls","status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","exit_code":0,"status":"completed"}}
Reading additional input from stdin...
{"type":"item.started","item":{"id":"item_2","type":"file_change","changes":[],"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[],"status":"completed"}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"done."}}
{"type":"turn.completed","usage":{"input_tokens":400,"cached_input_tokens":40,"output_tokens":80,"reasoning_output_tokens":12}}
"""


def test_the_codex_trace_counts_tool_items_messages_and_turn_usage() -> None:
    trace = codex(JSONL, b"")
    assert (trace.turns, trace.tool_calls, trace.tokens) == (3, 2, 480)
    assert codex(b"not json\n{broken\n", b"").model_dump() == {
        "turns": 0, "tool_calls": 0, "tokens": None,
    }  # fmt: skip


def test_the_scripted_entry_is_the_live_one_but_for_the_model() -> None:
    live = yaml.safe_load((REPO / "entries" / "codex-cli.yaml").read_text())
    scripted = yaml.safe_load((REPO / "entries" / "codex-scripted.yaml").read_text())
    assert scripted["model"]["provider"] == "scripted" and live["model"]["provider"] == "openai"
    # the model each asks for: the entry's own
    assert live["agent"]["set_env"].pop("CODEX_MODEL") == live["model"]["name"]
    assert scripted["agent"]["set_env"].pop("CODEX_MODEL") == scripted["model"]["name"]
    files = scripted["agent"].pop("files")
    assert files == ["scripted/answers/*/brief-title.txt", "scripted/answers/*/faithful/"]
    # one install (the image's npm agent), one command template, one credential variable
    assert scripted["agent"] == live["agent"] and live["agent"]["credentials"] == ["OPENAI_API_KEY"]
    assert ("codex", "@openai/codex@0.171.0", "codex") in ImageRecipe().npm_agents
    assert live["agent"]["version"] == "0.171.0" and "install" not in live["agent"]
    differ = {k for k in live if live[k] != scripted[k]}
    assert differ == {"id", "model"}
