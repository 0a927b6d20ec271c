"""A scripted OpenAI-compatible model server on 127.0.0.1 (chat completions only).

It stands in for the model API, which cannot be reached from here: each request gets the
next canned reply, with token usage, and every request is kept for the test to inspect.
"""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from tests.sandbox.local_http import running


@dataclass
class Script:
    replies: list[str]
    requests: list[dict[str, Any]] = field(default_factory=list)
    authorization: list[str] = field(default_factory=list)  # each request's header
    prompt_tokens: int = 100
    completion_tokens: int = 20

    def next_reply(self, request: dict[str, Any]) -> str:
        self.requests.append(request)
        turn = min(len(self.requests), len(self.replies)) - 1
        return self.replies[turn]


def completion(script: Script, request: dict[str, Any]) -> dict[str, Any]:
    text = script.next_reply(request)
    usage = {
        "prompt_tokens": script.prompt_tokens,
        "completion_tokens": script.completion_tokens,
        "total_tokens": script.prompt_tokens + script.completion_tokens,
    }
    return {
        "id": f"chatcmpl-scripted-{len(script.requests)}",
        "object": "chat.completion",
        "created": 1767225600,
        "model": request.get("model", "scripted"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": usage,
    }


@contextmanager
def serve_model(script: Script) -> Iterator[int]:
    """Answer ``POST /v1/chat/completions`` from ``script`` until the block ends; yields the
    port. Anything else is a 404."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            size = int(self.headers.get("Content-Length", "0"))
            request = json.loads(self.rfile.read(size) or b"{}")
            script.authorization.append(self.headers.get("Authorization", ""))
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": f"no route {self.path}"}})
                return
            self._send(200, completion(script, request))

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    with running(Handler) as port:
        yield port
