"""What the scripted model says to an agent that has tools: the case's answer, written with
the agent's own tools, then a final text that ends the session the agent's own way.

Pure: the next reply is a function of the request alone. The plan of actions is
agent-neutral (:class:`Run` a command, :class:`Write` a file, :class:`Finish`); a
:class:`Dialect` reads an agent's requests (its task, the tool results so far) and turns an
action into that agent's tool call. The step is the number of tool results the conversation
holds. The first action looks around (``pwd``, the brief, the starter's files under
``site/``); its result tells the later steps the working directory (for tools that want an
absolute path) and which files exist already (written through the shell: Claude's Write
refuses a file it has not read). A file goes through the agent's file tool only when that
tool keeps its bytes (:func:`writable`); any other through the shell, as
:mod:`recon.agents.model_script` writes it (a heredoc, or base64).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from recon.agents.model_script import DELIMITER, write_commands
from recon.errors import HarnessError

LOOK = "pwd && head -n 5 brief.md && find site -type f | sort"
FINISHED = "The page is written under site/; nothing else to do."
WRITE_LIMIT = 8_192
"""Largest file given to a file tool (bytes); bigger ones go through the shell."""


@dataclass(frozen=True)
class Run:
    command: str
    note: str


@dataclass(frozen=True)
class Write:
    path: str  # relative to the working directory
    text: str


@dataclass(frozen=True)
class Finish:
    text: str


Action = Run | Write | Finish


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolReply:
    """One reply: text, and the tool calls to make (none: the session ends)."""

    text: str
    calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class Looked:
    """What the first action's result says: the working directory, the files there."""

    cwd: str
    existing: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def parse(cls, result: str) -> Looked:
        lines = result.splitlines()
        cwd = lines[0].strip() if lines and lines[0].startswith("/") else ""
        return cls(cwd, frozenset(line.strip() for line in lines if line.startswith("site/")))


def writable(data: bytes) -> bool:
    """Whether a file tool writes ``data`` byte for byte: small UTF-8 text ending in one
    newline, no carriage return, no trailing blanks (Claude's Write turned a line of blanks
    into an empty line)."""
    if len(data) > WRITE_LIMIT:
        return False
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    if not text.endswith("\n") or text.endswith("\n\n") or "\r" in text:
        return False
    return all(line == line.rstrip() for line in text.split("\n"))


def plan(files: Mapping[str, bytes], looked: Looked | None) -> list[Action]:
    """Every action for the answer ``files`` (path under ``site/`` -> bytes), in order.
    Before the first result (``looked`` None) only the first action is known for sure;
    the plan is the same at every later step, because that result stays in the request."""
    actions: list[Action] = [Run(LOOK, "Look at the brief and the starter")]
    existing = looked.existing if looked is not None else frozenset()
    can_write = looked is not None and bool(looked.cwd)
    for rel in sorted(files):
        target, data = f"site/{rel}", files[rel]
        if can_write and target not in existing and writable(data):
            actions.append(Write(target, data.decode("utf-8")))
            continue
        for i, command in enumerate(write_commands(target, data)):
            actions.append(Run(command, f"Write {target} (part {i + 1})"))
    actions.append(Finish(FINISHED))
    return actions


class Dialect(Protocol):
    """How one agent's requests read and its tool calls look."""

    def speaks(self, protocol: str, body: Mapping[str, Any]) -> bool: ...

    def task(self, body: Mapping[str, Any]) -> str:
        """The first user message's text (it holds the brief)."""
        ...

    def results(self, body: Mapping[str, Any]) -> list[str]:
        """The text of every tool result so far, in order."""
        ...

    def render(self, action: Action, step: int, cwd: str) -> ToolReply: ...


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text(c) for c in content if isinstance(c, (dict, str)))
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return str(content["text"])
    if isinstance(content, dict) and content.get("type") == "tool_result":
        return _text(content.get("content"))
    return ""


class ClaudeCode:
    """Claude Code over the Anthropic Messages API: its ``Bash`` and ``Write`` tools."""

    def speaks(self, protocol: str, body: Mapping[str, Any]) -> bool:
        names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        return protocol == "anthropic" and {"Bash", "Write"} <= names

    def task(self, body: Mapping[str, Any]) -> str:
        for message in body.get("messages") or []:
            if isinstance(message, dict) and message.get("role") == "user":
                return _text(message.get("content"))
        return ""

    def results(self, body: Mapping[str, Any]) -> list[str]:
        found = []
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    found.append(_text(block.get("content")))
        return found

    def render(self, action: Action, step: int, cwd: str) -> ToolReply:
        ident = f"toolu_recon_{step:04d}"
        if isinstance(action, Run):
            call = ToolCall(ident, "Bash", {"command": action.command, "description": action.note})
            return ToolReply("", (call,))
        if isinstance(action, Write):
            file_path = f"{cwd.rstrip('/')}/{action.path}"
            call = ToolCall(ident, "Write", {"file_path": file_path, "content": action.text})
            return ToolReply("", (call,))
        return ToolReply(action.text)


CODEX_TOOL = "exec_command"
PATCH_END = "RECON_PATCH_EOF"
"""The heredoc's delimiter: never a line of a patch (each line of one starts with + or ***)."""
_CODEX_HEADER = re.compile(r"(Chunk ID|Wall time|Original token count|Exit code): |Process exited ")


def patch_command(path: str, text: str) -> str:
    """The ``exec_command`` command adding the file ``path`` that holds ``text`` (which ends
    in one newline) through Codex's ``apply_patch``."""
    added = "".join(f"+{line}\n" for line in text.split("\n")[:-1])
    patch = f"*** Begin Patch\n*** Add File: {path}\n{added}*** End Patch\n"
    return f"apply_patch <<'{PATCH_END}'\n{patch}{PATCH_END}"


def command_output(result: str) -> str:
    """The command's own output in a Codex tool result (what follows its header's
    ``Output:`` line), or the whole text when it has no such header."""
    head, found, rest = result.partition("Output:\n")
    header = head.splitlines()
    if found and header and all(_CODEX_HEADER.match(line) for line in header):
        return rest
    return result


class Codex:
    """Codex CLI (``codex exec``) over the Responses API. Its shell tool is ``exec_command``
    (``{"cmd"}``, ``bash -lc`` in the turn's directory; a call named ``shell`` is refused).
    It offers no ``apply_patch`` function here, but intercepts an ``exec_command`` running
    ``apply_patch`` with the patch in a heredoc and applies the patch itself (a
    ``file_change`` event, no shell): a file is written that way. The session ends with a
    message that calls no tool. Its requests hold developer messages, a user message with
    the environment context, then the prompt: the task is every user message. A result is a
    ``function_call_output`` whose text starts with a header (``Chunk ID``, ``Wall time``,
    the exit code) and ``Output:``: the output alone is the result."""

    def speaks(self, protocol: str, body: Mapping[str, Any]) -> bool:
        names = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        return protocol == "responses" and CODEX_TOOL in names

    def task(self, body: Mapping[str, Any]) -> str:
        users = [i for i in _items(body) if i.get("role") == "user"]
        return "\n".join(_text(i.get("content")) for i in users)

    def results(self, body: Mapping[str, Any]) -> list[str]:
        outputs = [i for i in _items(body) if i.get("type") == "function_call_output"]
        return [command_output(_text(i.get("output"))) for i in outputs]

    def render(self, action: Action, step: int, cwd: str) -> ToolReply:
        ident = f"call_recon_{step:04d}"
        if isinstance(action, Finish):
            return ToolReply(action.text)
        command = (
            action.command if isinstance(action, Run) else patch_command(action.path, action.text)
        )
        return ToolReply("", (ToolCall(ident, CODEX_TOOL, {"cmd": command}),))


def _items(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = body.get("input")
    return [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []


GEMINI_TOOLS = ("run_shell_command", "write_file")
GEMINI_REFUSES = re.compile(r"`|[$<>]\(")
"""What Gemini CLI's shell tool refuses anywhere in a command, a quoted heredoc included
("Command injection detected: command substitution syntax"): backticks, ``$(``, ``<(``
and ``>(``."""
_HEREDOC = re.compile(rf"cat (>>?) (\S+) <<'{DELIMITER}'\n(.*){DELIMITER}\Z", re.DOTALL)


def gemini_command(command: str) -> str:
    """``command`` as Gemini CLI runs it: a heredoc write whose text holds what its shell
    tool refuses becomes the same write through ``base64 -d`` (the same bytes)."""
    if not GEMINI_REFUSES.search(command):
        return command
    head, found, rest = (
        ("", "", command) if command.startswith("cat ") else command.partition("&& ")
    )
    match = _HEREDOC.fullmatch(rest)
    if match is None:
        return command
    redirect, target, text = match.groups()
    encoded = base64.encodebytes(text.encode("utf-8")).decode("ascii")
    write = f"base64 -d {redirect} {target} <<'{DELIMITER}'\n{encoded}{DELIMITER}"
    return f"{head}{found}{write}"


_GEMINI_SECTION = re.compile(
    r"^(Output|Error|Exit Code|Signal|Background PIDs|Process Group PGID): "
)


def shell_output(result: str) -> str:
    """The command's own output in a Gemini ``run_shell_command`` result: the text of its
    ``Output:`` section inside ``<untrusted_context>``, or the whole text when it has none."""
    inner = result.strip()
    if inner.startswith("<untrusted_context>") and inner.endswith("</untrusted_context>"):
        inner = inner[len("<untrusted_context>") : -len("</untrusted_context>")].strip("\n")
    if not inner.startswith("Output: "):
        return result
    lines = inner[len("Output: ") :].split("\n")
    end = next((i for i, line in enumerate(lines) if i and _GEMINI_SECTION.match(line)), None)
    return "\n".join(lines[:end])


class Gemini:
    """Gemini CLI (``gemini -p``) over the Gemini API (``streamGenerateContent``). Its tools
    are ``run_shell_command`` (``{"command", "description"}``, ``bash -c`` in the workspace)
    and ``write_file`` (``{"file_path", "content"}``); a reply with no ``functionCall`` part
    ends the session. Its first user content is its session context; the prompt follows:
    the task is the text of every user part that is not a tool result. A result is a
    ``functionResponse`` part, its ``response.output`` the tool's text (the shell's wrapped
    in ``<untrusted_context>``, with an ``Output:`` section)."""

    def speaks(self, protocol: str, body: Mapping[str, Any]) -> bool:
        names = {
            d.get("name")
            for t in body.get("tools") or []
            if isinstance(t, dict)
            for d in t.get("functionDeclarations") or []
            if isinstance(d, dict)
        }
        return protocol == "gemini" and set(GEMINI_TOOLS) <= names

    def task(self, body: Mapping[str, Any]) -> str:
        return "\n".join(
            p["text"]
            for c in _contents(body)
            if c.get("role") == "user"
            for p in c.get("parts") or []
            if isinstance(p, dict) and isinstance(p.get("text"), str)
        )

    def results(self, body: Mapping[str, Any]) -> list[str]:
        found = []
        for content in _contents(body):
            for part in content.get("parts") or []:
                answer = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(answer, dict):
                    response = answer.get("response")
                    output = response.get("output") if isinstance(response, dict) else None
                    found.append(shell_output(output if isinstance(output, str) else ""))
        return found

    def render(self, action: Action, step: int, cwd: str) -> ToolReply:
        ident = f"gemini_recon_{step:04d}"
        if isinstance(action, Run):
            call = ToolCall(
                ident,
                GEMINI_TOOLS[0],
                {"command": gemini_command(action.command), "description": action.note},
            )
            return ToolReply("", (call,))
        if isinstance(action, Write):
            file_path = f"{cwd.rstrip('/')}/{action.path}"
            call = ToolCall(
                ident, GEMINI_TOOLS[1], {"file_path": file_path, "content": action.text}
            )
            return ToolReply("", (call,))
        return ToolReply(action.text)


def _contents(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = body.get("contents")
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


AIDER_LISTING = "*file listing*"
"""A phrase of aider's ``whole`` edit format's system prompt: its requests hold it."""
AIDER_SAID = "Here is every file of the page, each as a whole *file listing*."
"""The first line of the scripted model's listing reply (how a later request shows it)."""
_FENCE = "```"


def listing(files: Mapping[str, bytes]) -> str:
    """The answer ``files`` (path under ``site/`` -> bytes) as aider's ``whole`` edit format:
    each file's path on a line, then its whole text between fence lines. Aider writes the
    text between the fences as it is, each line with its line end; a file that does not end
    in a newline gains one (the closing fence starts a line). A file the format cannot carry
    (not UTF-8, or a line that starts a fence) is a harness error naming it."""
    parts = [AIDER_SAID, ""]
    for rel in sorted(files):
        try:
            text = files[rel].decode("utf-8")
        except UnicodeDecodeError:
            raise HarnessError(
                f"aider's whole edit format cannot carry site/{rel}: not UTF-8"
            ) from None
        if any(line.startswith(_FENCE) for line in text.splitlines()):
            raise HarnessError(
                f"aider's whole edit format cannot carry site/{rel}: a line starts with {_FENCE}"
            )
        ended = text if text.endswith("\n") else text + "\n"
        parts.append(f"site/{rel}\n{_FENCE}\n{ended}{_FENCE}\n")
    return "\n".join(parts)


class Aider:
    """aider (``--edit-format whole``) over chat completions. It has no tool calls: its tool
    is its edit format in the reply's text, which it applies itself. The first reply holds
    every file of the answer as a *file listing* (:func:`listing`); aider writes them and,
    with its lint and test reflections off, ends ``--message``'s one instruction. A further
    request (a reflection all the same) gets the final text, which holds no listing. Its
    requests hold the system prompt, example turns, then the task (the brief, with the
    format reminded): the task is every user message; the results are the scripted model's
    own earlier replies."""

    def speaks(self, protocol: str, body: Mapping[str, Any]) -> bool:
        system = [m for m in _messages(body) if m.get("role") == "system"]
        return protocol == "chat" and any(AIDER_LISTING in _text(m.get("content")) for m in system)

    def task(self, body: Mapping[str, Any]) -> str:
        users = [m for m in _messages(body) if m.get("role") == "user"]
        return "\n".join(_text(m.get("content")) for m in users)

    def results(self, body: Mapping[str, Any]) -> list[str]:
        said = [_text(m.get("content")) for m in _messages(body) if m.get("role") == "assistant"]
        return [text for text in said if text.startswith(AIDER_SAID)]

    def answer(self, files: Mapping[str, bytes], body: Mapping[str, Any]) -> ToolReply:
        return ToolReply(FINISHED if self.results(body) else listing(files))

    def render(self, action: Action, step: int, cwd: str) -> ToolReply:
        if isinstance(action, Write):
            return ToolReply(listing({action.path.removeprefix("site/"): action.text.encode()}))
        if isinstance(action, Finish):
            return ToolReply(action.text)
        raise HarnessError("aider runs no command of the model's (its shell needs a yes)")


def _messages(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    found = body.get("messages")
    return [m for m in found if isinstance(m, dict)] if isinstance(found, list) else []


DIALECTS: dict[str, Dialect] = {
    "claude-code": ClaudeCode(),
    "codex": Codex(),
    "gemini": Gemini(),
    "aider": Aider(),
}


@dataclass(frozen=True)
class ToolScripts:
    """One answer per case, chosen by the brief title in the task (the longest that occurs),
    spoken in whichever dialect the request is in."""

    by_title: dict[str, dict[str, bytes]]
    dialects: Mapping[str, Dialect] = field(default_factory=lambda: DIALECTS)

    @classmethod
    def from_answers(cls, answers: Path, kind: str) -> ToolScripts:
        scripts: dict[str, dict[str, bytes]] = {}
        for folder in sorted(p for p in answers.glob("*") if p.is_dir()):
            marker, answer = folder / "brief-title.txt", folder / kind
            if marker.is_file() and answer.is_dir():
                files = {
                    p.relative_to(answer).as_posix(): p.read_bytes()
                    for p in sorted(answer.rglob("*"))
                    if p.is_file()
                }
                scripts[marker.read_text(encoding="utf-8").strip()] = files
        if not scripts:
            raise HarnessError(f"scripted model: no {kind} answers under {answers}")
        return cls(scripts)

    def dialect(self, protocol: str, body: Mapping[str, Any]) -> Dialect | None:
        return next((d for d in self.dialects.values() if d.speaks(protocol, body)), None)

    def reply(self, protocol: str, body: Mapping[str, Any]) -> ToolReply | None:
        """The next reply, or None: not a request of an agent with tools, or no case in it."""
        dialect = self.dialect(protocol, body)
        if dialect is None:
            return None
        task = dialect.task(body)
        titles = sorted((t for t in self.by_title if t in task), key=len)
        if not titles:
            return None
        if isinstance(dialect, Aider):
            return dialect.answer(self.by_title[titles[-1]], body)
        results = dialect.results(body)
        looked = Looked.parse(results[0]) if results else None
        actions = plan(self.by_title[titles[-1]], looked)
        step = min(len(results), len(actions) - 1)
        return dialect.render(actions[step], step, looked.cwd if looked else "")
