"""What a gateway entry (or the live settings beside it) can get wrong is refused when the
project loads, as `recon validate` meets it: one line naming the file, the field and the
fix, exit 2 (issue 24). No engine, no socket: the real entries/claude-code.yaml, changed
one way at a time, in a project of its own.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from recon.cli import main
from tests.conftest import REPO, doit_env

ENTRY = REPO / "entries" / "claude-code.yaml"
SOURCE = "entries/claude-code.yaml"


@pytest.fixture(autouse=True)
def _in_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # as a user runs it: paths are shown from the project root


def _validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Callable[[Any], None]
) -> tuple[int, list[str]]:
    """``recon validate --no-render`` of a project holding the changed entry alone."""
    data = yaml.safe_load(ENTRY.read_text())
    change(data)
    (tmp_path / "entries").mkdir(exist_ok=True)
    (tmp_path / "entries" / "claude-code.yaml").write_text(yaml.safe_dump(data))
    code = main(["--root", str(tmp_path), "validate", "--no-render"])
    return code, capsys.readouterr().err.splitlines()


def _set(path: str, value: Any) -> Callable[[Any], None]:
    def change(data: Any) -> None:
        *parents, last = path.split(".")
        for part in parents:
            data = data[part]
        data[last] = value

    return change


def test_the_real_entry_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _validate(tmp_path, capsys, lambda data: None)
    assert (code, err) == (0, [])


@pytest.mark.parametrize(
    ("change", "field", "says"),
    [
        (
            _set("sandbox.egress", ["registry.npmjs.org", "api.anthropic.com"]),
            "sandbox.egress[1]",
            "api.anthropic.com is a model host: with agent.gateway every model call goes "
            "through the gateway (metered, budgeted, recorded); remove it "
            "(got 'api.anthropic.com')",
        ),
        (
            _set("sandbox.egress", ["generativelanguage.googleapis.com:443"]),
            "sandbox.egress[0]",
            "generativelanguage.googleapis.com is a model host",
        ),
        (
            _set("model.provider", "antropic"),
            "model.provider",
            "unknown provider 'antropic' for the gateway; use one of anthropic, openai, "
            "gemini, scripted (or remove agent.gateway) (got 'antropic')",
        ),
        (
            _set("model.provider", "none"),
            "model.provider",
            "has no model for the gateway to reach; use one of anthropic",
        ),
        (
            _set("agent.gateway", {}),
            "agent",
            "gateway: names no base-URL variable; name the agent's own (ANTHROPIC_BASE_URL",
        ),
        (
            _set("budget.tokens", "5000"),
            "budget.tokens",
            "must be a whole number; write one, like 3 (got '5000')",
        ),
        (
            _set("budget.cost_usd", "5 USD"),
            "budget.cost_usd",
            "'5 USD' is not a number; write dollars as 2.5",
        ),
    ],
    ids=[
        "egress-model-host",
        "egress-model-host-port",
        "provider-unknown",
        "provider-none",
        "gateway-empty",
        "tokens-text",
        "cost-text",
    ],
)
def test_a_bad_gateway_entry_is_one_line_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    change: Callable[[Any], None],
    field: str,
    says: str,
) -> None:
    code, err = _validate(tmp_path, capsys, change)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"recon: {SOURCE}: {field}: {says}"), err[0]


def test_without_the_gateway_a_model_host_and_any_provider_are_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def direct(data: Any) -> None:
        del data["agent"]["gateway"]
        data["agent"]["env"] = ["ANTHROPIC_API_KEY"]
        data["sandbox"]["egress"] = ["api.anthropic.com"]
        data["model"]["provider"] = "test-scripted"

    assert _validate(tmp_path, capsys, direct) == (0, [])


@pytest.mark.parametrize(
    ("variable", "value", "says"),
    [
        ("RECON_ANTHROPIC_BASE_URL", "http://api.anthropic.com", "plain http reaches 127.0.0.1"),
        ("RECON_OPENAI_BASE_URL", "api.openai.com", "not an https:// URL"),
        ("RECON_GEMINI_BASE_URL", "https://u:p@x.example", "holds no user, query or fragment"),
        ("RECON_LIVE_CA", "/no/such/ca.pem", "No such file or directory"),
    ],
)
def test_a_bad_live_setting_is_one_line_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    variable: str,
    value: str,
    says: str,
) -> None:
    monkeypatch.setenv(variable, value)
    code, err = _validate(tmp_path, capsys, lambda data: None)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"recon: {variable}="), err[0]
    assert says in err[0] and err[0].endswith("or unset it"), err[0]


def test_a_ca_file_that_holds_no_certificate_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate\n")
    monkeypatch.setenv("RECON_LIVE_CA", str(ca))
    code, err = _validate(tmp_path, capsys, lambda data: None)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith(f"recon: RECON_LIVE_CA={ca}: ") and "PEM" in err[0], err[0]


def test_a_malformed_price_table_is_one_line_exit_2_for_validate_and_doit(
    tmp_path: Path,
) -> None:
    """The table ships inside the package: a project whose own copy of ``recon`` holds a
    broken one, run as a user runs it (``python -m`` imports the project's ``recon``)."""
    project = tmp_path / "p"
    shutil.copytree(REPO / "recon", project / "recon", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(REPO / "dodo.py", project / "dodo.py")
    for folder in ("cases", "entries", "releases"):
        (project / folder).mkdir()
    shutil.copy2(ENTRY, project / "entries" / "claude-code.yaml")
    prices = project / "recon" / "gateway" / "prices.json"
    broken = re.sub(r'"output":[-+.e0-9]+', '"output":"cheap"', prices.read_text(), count=1)
    prices.write_text(broken)
    env = doit_env(project)
    env.pop("PYTHONPATH", None)
    for command in (["-m", "recon", "validate", "--no-render"], ["-m", "doit", "list"]):
        proc = subprocess.run(
            [sys.executable, *command], cwd=project, env=env, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        lines = proc.stderr.splitlines()
        assert proc.returncode == 2 and len(lines) == 1, (command, proc.stderr)
        assert lines[0].startswith(f"recon: {prices}: prices.anthropic."), lines[0]
        assert lines[0].endswith(".output: must be a number; write one, like 0.5 (got 'cheap')")
