"""The scripted model, started on demand for the attempts of entries that need it.

An entry whose model provider is ``scripted`` talks to a :mod:`recon.agents.model_server`
on the host's 127.0.0.1, at the port its ``agent.set_env`` names (a URL such as
``OPENAI_API_BASE: http://127.0.0.1:18080/v1``), which its ``sandbox.egress`` must admit.
:class:`ModelServers` starts that server when the first such attempt of a build starts,
shares it between the attempts running at the same time (its replies depend on the
request alone), and stops it when the last one ends. The server serves every case's
``faithful`` answer under ``entries/scripted/answers/`` (list those files in the entry's
``agent.files``, so the entry digest covers the script) and issues a fresh key, given to
the attempt as each of the entry's ``agent.credentials``.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from recon.agents.model_server import CaseScripts, ModelServer, serve_model
from recon.errors import ConfigError
from recon.model import Entry

SCRIPTED = "scripted"
ANSWERS = Path("scripted") / "answers"
KIND = "faithful"


def scripted_port(entry: Entry) -> int:
    """The 127.0.0.1 port the entry's ``agent.set_env`` points its model client at."""
    where = f"entries/{entry.id}.yaml"
    for name, value in sorted(entry.agent.set_env.items()):
        url = urlsplit(value)
        if url.scheme in ("http", "https") and url.hostname == "127.0.0.1" and url.port:
            if f"127.0.0.1:{url.port}" not in entry.sandbox.egress:
                raise ConfigError(
                    f"{where}: sandbox.egress: the scripted model's 127.0.0.1:{url.port} "
                    f"(agent.set_env.{name}) is not admitted; add it"
                )
            return url.port
    raise ConfigError(
        f"{where}: agent.set_env: a scripted model needs the URL of its server on "
        "127.0.0.1 with a port, e.g. OPENAI_API_BASE: http://127.0.0.1:18080/v1"
    )


class ModelServers:
    """The scripted model servers of this process: one per port, shared while in use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: dict[int, tuple[ModelServer, ExitStack, int]] = {}

    @contextmanager
    def serving(self, entry: Entry, entries_dir: Path) -> Iterator[dict[str, str]]:
        """For a scripted entry: its server runs inside the block, and the block gets the
        environment the attempt adds (each credential set to the server's key). For any
        other entry: nothing runs, nothing is added."""
        if entry.model.provider != SCRIPTED:
            yield {}
            return
        port = scripted_port(entry)
        served = self._acquire(port, entries_dir / ANSWERS)
        try:
            yield {name: served.key for name in entry.agent.credentials}
        finally:
            self._release(port)

    def _acquire(self, port: int, answers: Path) -> ModelServer:
        with self._lock:
            if port in self._live:
                served, stack, users = self._live[port]
                self._live[port] = (served, stack, users + 1)
                return served
            stack = ExitStack()
            script = CaseScripts.from_answers(answers, KIND)
            key = f"sk-scripted-{secrets.token_hex(12)}"
            served = stack.enter_context(serve_model(script, key, port))
            self._live[port] = (served, stack, 1)
            return served

    def _release(self, port: int) -> None:
        with self._lock:
            served, stack, users = self._live[port]
            if users > 1:
                self._live[port] = (served, stack, users - 1)
                return
            del self._live[port]
            stack.close()
