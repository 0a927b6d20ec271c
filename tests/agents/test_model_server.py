"""The scripted model (recon/agents/): its script per case, its replies over real HTTP, the
port an entry names, sharing between concurrent attempts and a taken port.

Fast: no engine, no browser. The scripts are replayed with bash in a temporary
workspace, so what the model "writes" is checked byte for byte against the answer."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from recon.agents import CaseScripts, FixedScript, ModelServers, scripted_port, serve_model
from recon.agents.model_script import CHUNK, SUBMIT, case_replies, write_commands
from recon.errors import ConfigError, HarnessError
from recon.project.loader import Project
from recon.project.settings import Settings
from tests.conftest import free_port

REPO = Path(__file__).resolve().parents[2]
ANSWERS = REPO / "entries" / "scripted" / "answers"
ACTION = re.compile(r"```bash\s*\n(.*?)\n```", re.DOTALL)  # mini-swe-agent's action_regex


def _replay(replies: list[str], workspace: Path) -> None:
    """Run every reply's one bash block in ``workspace``, as mini-swe-agent does."""
    for reply in replies:
        [action] = ACTION.findall(reply)
        subprocess.run(["bash", "-c", action.strip()], cwd=workspace, check=True)


def _files(folder: Path) -> dict[str, bytes]:
    files = (p for p in folder.rglob("*") if p.is_file())
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in files}


@pytest.mark.parametrize("case", ["clean-blog", "todomvc", "markdown-docs"])
def test_a_case_script_writes_its_faithful_answer_byte_for_byte(case: str, tmp_path: Path) -> None:
    (tmp_path / "brief.md").write_text("# Brief\n")
    replies = case_replies(ANSWERS / case / "faithful")
    _replay(replies, tmp_path)
    assert _files(tmp_path / "site") == _files(ANSWERS / case / "faithful")
    assert ACTION.findall(replies[-1]) == [SUBMIT]
    assert all(len(ACTION.findall(r)[0]) < 128 * 1024 for r in replies)  # one argv string


def test_write_commands_carry_any_bytes_in_chunks(tmp_path: Path) -> None:
    cases = {
        "text.txt": b"line one\nline two\n",
        "no-newline.txt": b"no final newline",
        "fence.md": b"```bash\nrm -rf /\n```\n",
        "binary.bin": bytes(range(256)) * 600,  # 153,600 bytes: three chunks
        "long.css": b"a{}" * 50_000 + b"\n",  # one 150,001-byte line
        "empty.txt": b"",
    }
    for name, data in cases.items():
        commands = write_commands(f"site/{name}", data)
        for command in commands:
            subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
        assert (tmp_path / "site" / name).read_bytes() == data, name
    assert len(write_commands("site/binary.bin", cases["binary.bin"])) == -(-153_600 // CHUNK)


def _post(port: int, body: dict[str, Any], key: str = "k") -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _conversation(task: str, assistant_turns: int) -> dict[str, Any]:
    messages = [{"role": "system", "content": "you are an agent"}]
    messages.append({"role": "user", "content": f"Please solve this issue: {task}"})
    for _ in range(assistant_turns):
        messages += [{"role": "assistant", "content": "..."}, {"role": "user", "content": "ok"}]
    return {"model": "scripted", "messages": messages}


def test_replies_depend_on_the_request_alone() -> None:
    script = CaseScripts.from_answers(ANSWERS, "faithful")
    todomvc = case_replies(ANSWERS / "todomvc" / "faithful")
    brief = (REPO / "cases" / "todomvc" / "public" / "brief.md").read_text()
    with serve_model(script, "k") as served:
        # two conversations interleaved: each gets its own turn, whatever came between
        for turns in (0, 2, 0, 1, 99):
            status, body = _post(served.port, _conversation(brief, turns))
            assert status == 200
            expected = todomvc[min(turns, len(todomvc) - 1)]
            assert body["choices"][0]["message"]["content"] == expected
            assert body["usage"]["total_tokens"] == 120
        assert _post(served.port, _conversation("an unknown brief", 0))[0] == 404
        assert _post(served.port, _conversation(brief, 0), key="wrong")[0] == 401
        assert served.authorization[-1] == "Bearer wrong"
        assert len(served.requests) == 7


def test_a_taken_port_is_one_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        wanted = f"cannot listen on 127.0.0.1:{port}.*free port"
        with pytest.raises(HarnessError, match=wanted), serve_model(FixedScript(["x"]), "k", port):
            pass


def _mini(tmp_path: Path, port: int, egress: int | None = None) -> Any:
    entry = Project.open(REPO, Settings.from_env()).entries["mini-swe-agent-scripted"]
    set_env = {**entry.agent.set_env, "OPENAI_API_BASE": f"http://127.0.0.1:{port}/v1"}
    sandbox = entry.sandbox.model_copy(update={"egress": [f"127.0.0.1:{egress or port}"]})
    agent = entry.agent.model_copy(update={"set_env": set_env})
    return entry.model_copy(update={"agent": agent, "sandbox": sandbox})


def test_the_port_comes_from_set_env_and_egress_must_admit_it(tmp_path: Path) -> None:
    assert (
        scripted_port(Project.open(REPO, Settings.from_env()).entries["mini-swe-agent-scripted"])
        == 18080
    )
    assert scripted_port(_mini(tmp_path, 18123)) == 18123
    with pytest.raises(ConfigError, match=r"sandbox\.egress: .*127\.0\.0\.1:18123.*add it"):
        scripted_port(_mini(tmp_path, 18123, egress=18124))


def test_concurrent_attempts_share_one_server_stopped_after_the_last(tmp_path: Path) -> None:
    port = free_port()
    entry = _mini(tmp_path, port)
    servers = ModelServers()
    brief = (REPO / "cases" / "html5-boilerplate" / "public" / "brief.md").read_text()
    with servers.serving(entry, REPO / "entries") as first:
        with servers.serving(entry, REPO / "entries") as second:
            assert first == second and set(first) == {"SCRIPTED_MODEL_KEY"}
            key = first["SCRIPTED_MODEL_KEY"]
        assert _post(port, _conversation(brief, 0), key=key)[0] == 200  # still serving
    with pytest.raises(urllib.error.URLError):
        _post(port, _conversation(brief, 0), key=key)  # stopped: connection refused
    # an entry of another provider starts nothing and adds nothing
    other = Project.open(REPO, Settings.from_env()).entries["scripted-faithful-docker"]
    with servers.serving(other, REPO / "entries") as added:
        assert added == {}
