"""The scripted model: an OpenAI-compatible chat-completions server on 127.0.0.1.

It stands in for a model API, which cannot be reached from here, for entries whose model
provider is ``scripted`` (``mini-swe-agent-scripted``). Replies are a function of the
request alone (a :class:`Script`), so any number of concurrent attempts can share one
server: the turn is the number of assistant messages already in the conversation.

:class:`CaseScripts` is what a release build serves: it recognises the case from the
brief's title in the task (``answers/<case>/brief-title.txt``, as ``scripted/answer.py``
does) and writes that case's answer through bash commands, one file (or chunk) per turn,
then submits. :class:`FixedScript` replies from a list, for tests. Every request must carry
the key the server was started with (``Authorization: Bearer <key>``); each request and
header is kept on the :class:`ModelServer` for tests to inspect.
"""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from recon.agents.model_script import case_replies
from recon.errors import HarnessError


class Script(Protocol):
    def reply(self, request: dict[str, Any]) -> str | None:
        """The assistant's reply to ``request``; None when the script has none for it."""
        ...


def turn(request: dict[str, Any]) -> int:
    """How many replies the conversation already holds."""
    return sum(1 for m in request.get("messages", []) if m.get("role") == "assistant")


def task_text(request: dict[str, Any]) -> str:
    """The first user message: the agent's task, holding the brief."""
    for message in request.get("messages", []):
        if message.get("role") == "user":
            content = message.get("content", "")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


@dataclass(frozen=True)
class FixedScript:
    """The same replies for every conversation, one per turn; the last one repeats."""

    replies: list[str]

    def reply(self, request: dict[str, Any]) -> str | None:
        return self.replies[min(turn(request), len(self.replies) - 1)]


@dataclass(frozen=True)
class CaseScripts:
    """One script per case, chosen by the brief title found in the task (the longest one
    that occurs, so no title shadows a longer one)."""

    by_title: dict[str, list[str]]

    @classmethod
    def from_answers(cls, answers: Path, kind: str) -> CaseScripts:
        """Every ``answers/<case>/`` with a ``brief-title.txt`` and a ``<kind>/`` folder."""
        scripts: dict[str, list[str]] = {}
        for folder in sorted(p for p in answers.glob("*") if p.is_dir()):
            marker, answer = folder / "brief-title.txt", folder / kind
            if marker.is_file() and answer.is_dir():
                scripts[marker.read_text(encoding="utf-8").strip()] = case_replies(answer)
        if not scripts:
            raise HarnessError(f"scripted model: no {kind} answers under {answers}")
        return cls(scripts)

    def reply(self, request: dict[str, Any]) -> str | None:
        task = task_text(request)
        titles = sorted((t for t in self.by_title if t in task), key=len)
        if not titles:
            return None
        replies = self.by_title[titles[-1]]
        return replies[min(turn(request), len(replies) - 1)]


@dataclass
class ModelServer:
    """A running server: its port, and what it was asked (for tests)."""

    port: int
    key: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorization: list[str] = field(default_factory=list)


def completion(text: str, request: dict[str, Any], number: int) -> dict[str, Any]:
    """A chat completion carrying ``text``, with fixed token usage (100 in, 20 out)."""
    return {
        "id": f"chatcmpl-scripted-{number}",
        "object": "chat.completion",
        "created": 1767225600,
        "model": request.get("model", "scripted"),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def _handler(script: Script, served: ModelServer) -> type[http.server.BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(size) or b"{}")
            header = self.headers.get("Authorization", "")
            with lock:
                served.requests.append(request)
                served.authorization.append(header)
                number = len(served.requests)
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
            elif header != f"Bearer {served.key}":
                self._send(401, {"error": {"message": "scripted model: wrong or missing key"}})
            elif (text := script.reply(request)) is None:
                message = "scripted model: no script for this task (no known brief title in it)"
                self._send(404, {"error": {"message": message}})
            else:
                self._send(200, completion(text, request, number))

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


@contextmanager
def serve_model(script: Script, key: str, port: int = 0) -> Iterator[ModelServer]:
    """Answer ``POST .../chat/completions`` from ``script`` on 127.0.0.1:``port`` (0: a free
    one) until the block ends. A port already taken is a :class:`HarnessError`."""
    served = ModelServer(port=port, key=key)
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _handler(script, served))
    except OSError as err:
        raise HarnessError(
            f"scripted model: cannot listen on 127.0.0.1:{port} ({err.strerror}); stop what "
            "listens there, or move the entry to a free port (agent.set_env and sandbox.egress)"
        ) from err
    server.daemon_threads = True
    served.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, args=(0.1,), daemon=True)
    thread.start()
    try:
        yield served
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
