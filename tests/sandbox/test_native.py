"""The native backend classifies outcomes and never loses the logs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from recon.model import Contract, Entry
from recon.sandbox import AttemptRun, native, parse_trace, run_native
from tests.sandbox.tricks import TRICKS, Trick, agent, capped, check_attempt


def _entry(script: str, wall_s: int = 30, env: list[str] | None = None) -> Entry:
    return Entry.model_validate(
        {
            "id": "t",
            "model": {"provider": "p", "name": "m", "version": "1"},
            "agent": {
                "name": "a",
                "version": "1",
                "command": ["{python}", "-c", script, "{workspace}"],
                "env": env or [],
            },
            "reasoning_effort": "none",
            "tool_profile": "none",
            "sandbox": {"backend": "native"},
            "budget": {
                "cpus": 1,
                "memory_mb": 1024,
                "pids": 64,
                "wall_s": wall_s,
                "disk_mb": 16,
                "output_mb": 1,
            },
        }
    )


CONTRACT = Contract.model_validate(
    {
        "routes": ["/"],
        "viewports": ["desktop"],
        "build": {"command": [], "output": "site"},
    }
)
WRITE = (
    "import sys,pathlib; p=pathlib.Path(sys.argv[1])/'site'; p.mkdir(); "
    "(p/'index.html').write_text('x')"
)


def _run(
    ws: Path, entry: Entry, entries: Path, contract: Contract, time_limit_s: int
) -> AttemptRun:
    return run_native(ws, entry, entries, contract, time_limit_s, out=ws.parent / "out")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def test_valid(ws: Path, tmp_path: Path) -> None:
    run = _run(ws, _entry(WRITE + "; print('turns: 3')"), tmp_path, CONTRACT, 30)
    assert run.outcome == "valid" and run.output == tmp_path / "out"
    assert (run.output / "index.html").read_text() == "x"  # a copy: the workspace goes away
    assert run.trace.turns == 3 and run.refusals == []


def test_crash_is_missing(ws: Path, tmp_path: Path) -> None:
    run = _run(ws, _entry("raise SystemExit(3)"), tmp_path, CONTRACT, 30)
    assert run.outcome == "missing" and run.exit_code == 3 and run.output is None


def test_no_output_is_ungradeable(ws: Path, tmp_path: Path) -> None:
    run = _run(ws, _entry("pass"), tmp_path, CONTRACT, 30)
    assert run.outcome == "ungradeable" and "site/" in run.reason


def test_timeout(ws: Path, tmp_path: Path) -> None:
    run = _run(ws, _entry("import time; time.sleep(30)"), tmp_path, CONTRACT, 1)
    assert run.outcome == "timeout" and run.exit_code is None


def test_failing_build_step_is_ungradeable(ws: Path, tmp_path: Path) -> None:
    contract = CONTRACT.model_copy(
        update={"build": CONTRACT.build.model_copy(update={"command": ["false"]})}
    )
    run = _run(ws, _entry(WRITE), tmp_path, contract, 30)
    assert run.outcome == "ungradeable" and "build step" in run.reason


def test_unstartable_agent_is_a_harness_failure(ws: Path, tmp_path: Path) -> None:
    entry = _entry("pass").model_copy(deep=True)
    bad = entry.agent.model_copy(update={"command": ["/nonexistent/agent"]})
    run = _run(ws, entry.model_copy(update={"agent": bad}), tmp_path, CONTRACT, 30)
    assert run.outcome == "harness_failure"


def test_log_is_capped_and_secrets_are_scrubbed(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_TEST_KEY", "sk-very-secret-value")
    script = "import os; print(os.environ['RECON_TEST_KEY']); print('x' * 3_000_000)"
    run = _run(ws, _entry(script, env=["RECON_TEST_KEY"]), tmp_path, CONTRACT, 30)
    assert b"sk-very-secret-value" not in run.logs and b"***" in run.logs
    assert len(run.logs) < 1024 * 1024 + 200 and b"log truncated" in run.logs
    assert "RECON_TEST_KEY" in os.environ


def test_parse_trace() -> None:
    trace = parse_trace(b"hello\nturns: 4\ntool_calls: 9\ntokens: 1200\n")
    assert (trace.turns, trace.tool_calls, trace.tokens) == (4, 9, 1200)
    flood = parse_trace(b"turns: " + b"9" * 5000 + b"\ntokens: 12\n")  # no ValueError
    assert (flood.turns, flood.tokens) == (None, 12)


def test_the_agent_sees_a_copy_of_its_declared_files_only(ws: Path, tmp_path: Path) -> None:
    entries = tmp_path / "entries"
    (entries / "scripted" / "answers").mkdir(parents=True)
    (entries / "scripted" / "answers" / "index.html").write_text("<h1>answer</h1>\n")
    (entries / "scripted" / "agent.py").write_text(
        "import os, sys, pathlib\n"
        "root = sys.argv[2]\n"
        "seen = sorted(os.path.relpath(os.path.join(d, f), root)\n"
        "              for d, _, fs in os.walk(root) for f in fs)\n"
        "site = pathlib.Path(sys.argv[1]) / 'site'\n"
        "site.mkdir()\n"
        "(site / 'index.html').write_text(repr(seen))\n"
        "(site / 'where.txt').write_text(root)\n"
    )
    entry = _entry("pass")
    agent = entry.agent.model_copy(
        update={
            "command": ["{python}", "{entry_dir}/scripted/agent.py", "{workspace}", "{entry_dir}"],
            "files": ["scripted/agent.py"],
        }
    )
    run = _run(ws, entry.model_copy(update={"agent": agent}), entries, CONTRACT, 30)
    assert run.outcome == "valid", (run.reason, run.logs)
    assert (ws / "site" / "index.html").read_text() == "['scripted/agent.py']"
    where = Path((ws / "site" / "where.txt").read_text())
    assert entries.resolve() not in [where, *where.parents]  # a copy, not entries/ itself
    assert not where.exists()  # removed with the attempt


@pytest.mark.parametrize("error", [ValueError, RuntimeError, KeyError])
def test_an_unexpected_exception_is_a_harness_bug_named_in_the_reason(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: type[Exception]
) -> None:
    def broken(*args: object) -> None:
        raise error("the harness tripped over itself")

    monkeypatch.setattr(native, "_environment", broken)
    run = _run(ws, _entry(WRITE), tmp_path, CONTRACT, 30)
    assert run.outcome == "harness_failure"
    assert run.reason.startswith(f"harness bug: {error.__name__}: "), run.reason


def test_undeclarable_agent_files_are_a_harness_failure_naming_the_field(
    ws: Path, tmp_path: Path
) -> None:
    entry = _entry(WRITE)
    agent = entry.agent.model_copy(update={"files": ["../outside.py"]})
    run = _run(ws, entry.model_copy(update={"agent": agent}), tmp_path, CONTRACT, 30)
    assert run.outcome == "harness_failure"
    assert run.reason.startswith("harness: entries/t.yaml: agent.files[0]: '../outside.py'")


# -- no process of an attempt outlives it ---------------------------------------------------

ESCAPER = r"""
import os, subprocess, sys, time
from pathlib import Path
ws = Path(sys.argv[1])

def note(pid):
    start = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    with open(ws / "pids", "a") as out:
        out.write(f"{pid} {start}\n")

note(subprocess.Popen(["setsid", "sleep", "300"]).pid)  # its own session
note(subprocess.Popen(["sh", "-c", "trap '' TERM HUP; exec sleep 301"]).pid)  # ignores TERM
read, write = os.pipe()
if os.fork() == 0:  # a daemon: double fork, new session, parent gone
    os.setsid()
    pid = os.fork()
    if pid == 0:
        os.execvp("sleep", ["sleep", "302"])
    os.write(write, str(pid).encode())
    os._exit(0)
time.sleep(0.5)
note(int(os.read(read, 64)))
site = ws / "site"
site.mkdir()
(site / "index.html").write_text("<p>left things running</p>")
print("turns: 1", flush=True)
if len(sys.argv) > 2:
    time.sleep(600)  # past the time limit
"""
BUILD = (
    "node -e 'setTimeout(() => {}, 1e6)' & "
    'echo "$! $(cut -d" " -f22 /proc/$!/stat)" >> pids; sleep 0.5; kill -9 $$'
)


def _alive(ws: Path) -> list[str]:
    """The recorded processes that still exist (as themselves: same pid, same start time),
    zombies included."""
    found = []
    for line in (ws / "pids").read_text().splitlines():
        pid, start = line.split()
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[19] == start:
            found.append(f"{pid} {stat.split(' (')[1].split(')')[0]} state {fields[0]}")
    return found


def _escaper(tmp_path: Path, *extra: str) -> Entry:
    script = tmp_path / "escaper.py"  # a file: its braces are no command placeholders
    script.write_text(ESCAPER)
    entry = _entry("pass")
    agent = entry.agent.model_copy(
        update={"command": ["{python}", str(script), "{workspace}", *extra]}
    )
    return entry.model_copy(update={"agent": agent})


def test_no_process_outlives_an_attempt_whose_build_was_killed(ws: Path, tmp_path: Path) -> None:
    contract = CONTRACT.model_copy(
        update={"build": CONTRACT.build.model_copy(update={"command": ["sh", "-c", BUILD]})}
    )
    run = _run(ws, _escaper(tmp_path), tmp_path, contract, 60)
    assert run.outcome == "ungradeable" and "build step" in run.reason, run.reason
    lines = (ws / "pids").read_text().splitlines()
    assert len(lines) == 4  # three left by the agent, node left by the build step
    assert _alive(ws) == []


def test_no_process_outlives_an_attempt_that_timed_out(ws: Path, tmp_path: Path) -> None:
    # 15 s: time enough, on a loaded machine, to start all three before the limit
    run = _run(ws, _escaper(tmp_path, "then-hang"), tmp_path, CONTRACT, 15)
    assert run.outcome == "timeout", run.reason
    assert len((ws / "pids").read_text().splitlines()) == 3
    assert _alive(ws) == []


def test_an_output_over_the_file_cap_is_ungradeable(ws: Path, tmp_path: Path) -> None:
    many = (
        "import sys,pathlib; p=pathlib.Path(sys.argv[1])/'site'; p.mkdir(); "
        "[(p / ('f' + str(i))).touch() for i in range(11)]"
    )
    entry = _entry(many)
    capped = entry.model_copy(
        update={"budget": entry.budget.model_copy(update={"output_files": 10})}
    )
    run = _run(ws, capped, tmp_path, CONTRACT, 30)
    assert run.outcome == "ungradeable" and run.output is None
    assert run.reason == "the build output has more than 10 files and folders (budget.output_files)"


# -- whatever the Candidate leaves in its output ------------------------------------------


def _trick_entry(tmp_path: Path, trick: Trick) -> Entry:
    script = tmp_path / "trick.py"
    script.write_text(agent(trick, "site"))
    entry = _entry("pass")
    command = ["{python}", str(script), "{workspace}"]
    agent_ = entry.agent.model_copy(update={"command": command})
    return entry.model_copy(update={"agent": agent_, "budget": capped(entry.budget)})


@pytest.mark.parametrize("trick", [t for t in TRICKS if t.native], ids=lambda t: t.name)
def test_every_trick_is_an_attempt_with_its_reason(ws: Path, tmp_path: Path, trick: Trick) -> None:
    (ws / "brief.md").write_text("the brief\n")
    run = _run(ws, _trick_entry(tmp_path, trick), tmp_path, CONTRACT, 30)
    check_attempt(run, trick, "site")
    assert bool(trick.refusals) != (tmp_path / "out").exists()  # a refused output is not kept


@pytest.mark.parametrize("target", ["elsewhere", "nowhere"])  # dangling: the same refusal
def test_an_output_folder_that_is_a_link_is_refused(ws: Path, tmp_path: Path, target: str) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "index.html").write_text("not the workspace's")
    script = f"import os, sys; os.symlink({str(tmp_path / target)!r}, sys.argv[1] + '/site')"
    run = _run(ws, _entry(script), tmp_path, CONTRACT, 30)
    assert (run.outcome, run.output) == ("ungradeable", None), run.reason
    assert run.refusals == ["site: the output folder is a symlink or lies behind one"]
