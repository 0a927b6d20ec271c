"""The aider pieces, pure: its dialect of the tool script (its ``whole`` edit format, no tool
calls), applied to each case's starter as aider applies a reply, writes every case's
faithful answer, a file that does not end in a newline gaining one and no other byte
changed; a request that already holds the listing is answered with the final text; its chat
completions streamed and not say the same thing; its summary lines give the trace;
entries/aider-scripted.yaml is entries/aider.yaml but for the model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from recon.agents.scripted import ANSWERS, KIND
from recon.agents.tool_script import AIDER_LISTING, AIDER_SAID, FINISHED, ToolScripts, listing
from recon.agents.trace import aider
from recon.errors import HarnessError
from recon.gateway.assemble import assemble
from recon.gateway.protocols import Call
from recon.gateway.sse import SseParser
from recon.gateway.upstream import scripted_answer
from recon.sandbox import ImageRecipe
from tests.agents.test_tool_script import _drain, _NoText, _tree

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = ToolScripts.from_answers(REPO / "entries" / ANSWERS, KIND)
SYSTEM = (
    "Act as an expert software developer.\nTo suggest changes to a file you MUST return the "
    f"entire content of the updated file.\nYou MUST use this {AIDER_LISTING} format:\n"
)
# Every file of the faithful answers that does not end in a newline (minified vendor
# files): aider's whole format ends each file's last line before the closing fence.
GAINS_A_NEWLINE = {
    f"{case}/{name}"
    for case in ("bootstrap-widgets", "clean-blog", "gallery-carousel", "one-page-wonder")
    for name in ("vendor/bootstrap.bundle.min.js", "vendor/bootstrap.min.css")
} | {"sidebar-repair/css/styles.css"}


def _request(task: str, said: tuple[str, ...] = ()) -> dict[str, Any]:
    """aider's request: the system prompt, its example turns, the task with the format
    reminded; then each earlier reply of the model and a user turn after it."""
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Change the greeting to be more casual"},
        {"role": "assistant", "content": "Ok, I will:\n\nshow_greeting.py\n```\nx\n```\n"},
        {"role": "user", "content": f"{task}\n\nYou MUST use this {AIDER_LISTING} format:"},
    ]
    for text in said:
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": "ok?"}]
    return {"model": "scripted-aider", "stream": True, "messages": messages}


def _apply(reply: str, workspace: Path) -> list[str]:
    """What aider's WholeFileCoder does with a reply (fence ```): a line starting a fence
    opens a block named by the line before it (stripped) and the next fence line closes it;
    each block's lines, with their line ends, are the file. The files written, in order."""
    written, name, lines, previous = [], None, [], ""
    for line in reply.splitlines(keepends=True):
        if line.startswith("```"):
            if name is None:
                name, lines = previous.strip(), []
                continue
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_text("".join(lines), encoding="utf-8", newline="")
            written.append(name)
            name = None
        elif name is not None:
            lines.append(line)
        previous = line
    assert name is None, "an unclosed block"
    return written


@pytest.mark.parametrize("case", sorted(p.name for p in (REPO / "entries" / ANSWERS).iterdir()))
def test_the_aider_listing_writes_the_faithful_answer_but_final_newlines(
    case: str, tmp_path: Path
) -> None:
    workspace = tmp_path / "w"
    shutil.copytree(REPO / "cases" / case / "public" / "starter", workspace)
    brief = (REPO / "cases" / case / "public" / "brief.md").read_text()
    first = SCRIPTS.reply("chat", _request(f"Write under site/. {brief}"))
    assert first is not None and not first.calls and first.text.startswith(AIDER_SAID)
    written = _apply(first.text, workspace)
    answer = REPO / "entries" / ANSWERS / case / KIND
    want = _tree(answer)
    assert sorted(written) == sorted(f"site/{rel}" for rel in want)
    got = {rel: (workspace / "site" / rel).read_bytes() for rel in want}
    for rel, data in want.items():
        if f"{case}/{rel}" in GAINS_A_NEWLINE:
            assert not data.endswith(b"\n") and got[rel] == data + b"\n", rel
        else:
            assert got[rel] == data, rel
    # the next request holds the listing: the final text, which lists no file
    again = SCRIPTS.reply("chat", _request(brief, (first.text,)))
    assert again is not None and again.text == FINISHED and _apply(again.text, workspace) == []


def test_it_answers_aider_only_and_known_cases_only() -> None:
    title = next(iter(SCRIPTS.by_title))
    body = _request(f"# {title}")
    assert SCRIPTS.reply("chat", body) is not None
    assert SCRIPTS.reply("responses", body) is None and SCRIPTS.reply("anthropic", body) is None
    other = {**body, "messages": [{"role": "system", "content": "You are a helpful assistant"},
                                  *body["messages"][1:]]}  # fmt: skip
    assert SCRIPTS.reply("chat", other) is None  # mini-swe-agent's requests: the text script
    assert SCRIPTS.reply("chat", _request("no case")) is None
    # an earlier reply that is not the listing (aider's example turn) is not a result
    assert SCRIPTS.reply("chat", _request(f"# {title}", ("Ok.",))).text.startswith(AIDER_SAID)  # type: ignore[union-attr]


def test_a_file_the_whole_format_cannot_carry_is_named() -> None:
    with pytest.raises(HarnessError, match=r"site/a\.bin: not UTF-8"):
        listing({"a.bin": b"\xff\xfe"})
    with pytest.raises(HarnessError, match=r"site/notes\.md: a line starts with ```"):
        listing({"notes.md": b"# notes\n```sh\nls\n```\n"})
    assert listing({"a.css": b"x\n", "b.js": b"y"}) == (
        f"{AIDER_SAID}\n\nsite/a.css\n```\nx\n```\n\nsite/b.js\n```\ny\n```\n"
    )


def test_streamed_and_unstreamed_chat_replies_are_one_message() -> None:
    body = _request(next(iter(SCRIPTS.by_title)))
    shapes = []
    for stream in (False, True):
        call = Call("chat", "generate", "scripted-aider", stream)
        answer = scripted_answer(_NoText(), call, body, 7, SCRIPTS)
        data = b"".join(_drain(answer.chunks))
        shapes.append(assemble("chat", SseParser().feed(data)) if stream else json.loads(data))
    plain, streamed = shapes
    assert plain["choices"][0]["message"] == streamed["choices"][0]["message"]
    assert plain["choices"][0]["message"]["content"].startswith(AIDER_SAID)
    assert plain["usage"] == streamed["usage"] and plain["usage"]["completion_tokens"] > 1


LOG = b"""Aider v0.86.2
Model: openai/scripted-aider with whole edit format
site/index.html
```
<!doctype html>
```

Tokens: 596 sent, 15 received.

site/index.html
Applied edit to site/index.html
Applied edit to site/css/style.css
Tokens: 2.3k sent, 1.0k cache write, 500 cache hit, 12k received.
Cost: $0.01 message, $0.02 session.
"""


def test_the_aider_trace_counts_summary_lines_and_applied_edits() -> None:
    trace = aider(LOG, b"")
    # 596 + 15 + 2,300 + 12,000: aider's rounded counts; cache counts are part of "sent"
    assert (trace.turns, trace.tool_calls, trace.tokens) == (2, 2, 14911)
    assert trace.cost_usd == 0.02  # the session's total on the last Cost: line
    assert aider(b"Aider v0.86.2\nno model call\n", b"").model_dump() == {
        "turns": 0, "tool_calls": 0, "tokens": None,
    }  # fmt: skip


def test_the_scripted_entry_is_the_live_one_but_for_the_model() -> None:
    live = yaml.safe_load((REPO / "entries" / "aider.yaml").read_text())
    scripted = yaml.safe_load((REPO / "entries" / "aider-scripted.yaml").read_text())
    assert scripted["model"]["provider"] == "scripted" and live["model"]["provider"] == "openai"
    # the model each asks for: the entry's own, through litellm's OpenAI provider
    assert live["agent"]["set_env"].pop("AIDER_MODEL").startswith(f"openai/{live['model']['name']}")
    assert scripted["agent"]["set_env"].pop("AIDER_MODEL") == f"openai/{scripted['model']['name']}"
    files = scripted["agent"].pop("files")
    assert files == ["scripted/answers/*/brief-title.txt", "scripted/answers/*/faithful/"]
    # one install (the image's pip agent), one command template, one credential variable
    assert scripted["agent"] == live["agent"] and live["agent"]["credentials"] == ["OPENAI_API_KEY"]
    assert ("aider", "aider-chat==0.86.2", "aider") in ImageRecipe().pip_agents
    assert live["agent"]["version"] == "0.86.2" and "install" not in live["agent"]
    assert "{notice}" in live["agent"]["command"][-1]
    differ = {k for k in live if live[k] != scripted[k]}
    assert differ == {"id", "model"}
