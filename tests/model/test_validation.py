"""One validation layer: the file reader, constrained values, names against registries.

The fuzz corpus (tests/fuzz) runs malformed copies of the real files through the
commands; these are the unit checks of each rule, including what the corpus cannot hold
(a 50 MB file) and what must still be accepted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import TypeAdapter, ValidationError

from recon.errors import ConfigError
from recon.model import (
    PLACEHOLDERS,
    Contract,
    Entry,
    Grading,
    ReleaseResult,
    load_json,
    load_yaml,
    read_yaml,
)
from recon.model.grading import DIMENSIONS, against_contract
from recon.model.placeholders import check_template
from recon.model.values import RelativePath, Route
from recon.project.loader import Project

REPO = Path(__file__).resolve().parents[2]
ENTRY = REPO / "entries" / "scripted-faithful.yaml"
DOCKER_ENTRY = REPO / "entries" / "mini-swe-agent-scripted.yaml"


def refused(path: Path, text: str | bytes, model: Any = None) -> str:
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(ConfigError) as err:
        load_yaml(model, path) if model is not None else read_yaml(path)
    message = str(err.value)
    assert err.value.exit_code == 2 and "\n" not in message and len(message) <= 1000
    return message


# --- the reader ----------------------------------------------------------------------------


def test_a_50_mb_file_is_refused_by_its_size_before_it_is_read(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    with path.open("wb") as out:
        out.truncate(50 * 1024 * 1024)  # sparse: 50 MB that cost nothing to write
    with pytest.raises(ConfigError, match=r"52428800 bytes, over the 1 MiB limit"):
        read_yaml(path)


def test_an_alias_bomb_is_refused_from_the_event_stream(tmp_path: Path) -> None:
    lol = ",".join(['"lol"'] * 9)
    lines = [f"a: &a [{lol}]"]
    lines += [
        f"{b}: &{b} [{','.join([f'*{a}'] * 9)}]"
        for a, b in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    bomb = "\n".join(lines) + "\n"
    assert len(bomb) < 400
    assert "more than 16 YAML aliases" in refused(tmp_path / "bomb.yaml", bomb)


def test_few_aliases_that_repeat_a_large_value_are_refused_too(tmp_path: Path) -> None:
    text = "a: &a [" + ", ".join(["x"] * 5000) + "]\nb: [*a, *a, *a]\n"
    assert "repeat more than 10000 values" in refused(tmp_path / "r.yaml", text)
    assert read_yaml(_write(tmp_path / "ok.yaml", "a: &a [1, 2]\nb: *a\n")) == {
        "a": [1, 2],
        "b": [1, 2],
    }


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_duplicate_keys_name_both_lines(tmp_path: Path) -> None:
    text = "agent:\n  name: a\n  version: '1'\n  name: b\n"
    message = refused(tmp_path / "d.yaml", text)
    assert message.endswith(
        "line 4, column 3: duplicate key 'name' (first at line 2); keep one of them"
    )
    merged = "base: &b {x: 1}\nother:\n  <<: *b\n  x: 2\n"  # a merge key may be overridden
    assert read_yaml(_write(tmp_path / "m.yaml", merged))["other"] == {"x": 2}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"name: caf\xe9\n", "not UTF-8 text (byte 0xe9 at offset 9); save it as UTF-8"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "a binary file (NUL byte at offset 8)"),
        ("\ufeffname: bom\n".encode(), None),  # a UTF-8 byte order mark is fine
    ],
)
def test_encodings(tmp_path: Path, data: bytes, expected: str | None) -> None:
    if expected is None:
        assert read_yaml(_write(tmp_path / "x.yaml", data.decode("utf-8"))) == {"name": "bom"}
    else:
        assert expected in refused(tmp_path / "x.yaml", data)


def test_json_duplicate_keys_and_nan_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "release.json"
    path.write_text('{"release": "a", "release": "b"}')
    with pytest.raises(ConfigError, match="duplicate key 'release'"):
        load_json(ReleaseResult, path)
    reliability = {"attempts": 1, "by_outcome": {}, "harness_failure_rate": float("nan")}
    data = {"release": "r", "title": "t", "protocol": "p", "formal": False, "formal_note": "",
            "aggregation": "case-mean-v1", "active_cases": [], "entries": [], "attempts": [],
            "reliability": {"overall": reliability}}  # fmt: skip
    path.write_text(json.dumps(data))  # json.dumps writes NaN
    with pytest.raises(
        ConfigError, match=r"overall\.harness_failure_rate: must be a finite number"
    ):
        load_json(ReleaseResult, path)


def test_every_error_line_is_bounded_and_one_line(tmp_path: Path) -> None:
    huge = {"routes": ["/"], "viewports": ["x" * 100_000], "build": {"output": "site"}}
    message = refused(tmp_path / "c.yaml", yaml.safe_dump(huge), Contract)
    assert "viewports[0]: unknown viewport" in message and " […] " in message
    step = {"click": {"text": "a"}, "bad\nkey": 1}
    odd = huge | {
        "viewports": ["desktop"],
        "states": [{"name": "s", "route": "/", "steps": [step]}],
    }
    message = refused(tmp_path / "k.yaml", yaml.safe_dump(odd), Contract)
    assert "states[0].steps[0].bad\\nkey: unknown key" in message  # the newline escaped
    nested = "routes:\n  - " + "[" * 60 + "1" + "]" * 60 + "\n"
    assert "routes[0]" in refused(tmp_path / "n.yaml", nested, Contract)


# --- values ----------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["/", "/about", "/docs/", "/blog/post-1", "/a.b", "/x:y@z"])
def test_normalised_routes_are_accepted(route: str) -> None:
    assert TypeAdapter(Route).validate_python(route) == route


@pytest.mark.parametrize(
    "route",
    ["", "about", "/..", "/a/../b", "/./a", "/a\0b", "/a\nb", "//evil", "/?q", "/#f",
     "/" + "a" * 300, "/a b", "/a\\b", "/%2e%2e", "/~u", "/a//b", "/a;b", "/caf\u00e9"],
)  # fmt: skip
def test_other_routes_are_refused(route: str) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(Route).validate_python(route)


@pytest.mark.parametrize("path", ["site", "dist/www", "scripted/answers/x/index.html", ".env"])
def test_relative_paths_inside_the_folder_are_accepted(path: str) -> None:
    assert TypeAdapter(RelativePath).validate_python(path) == path


@pytest.mark.parametrize(
    "path", [".", "", "..", "../x", "a/../../b", "/etc/passwd", "./a", "a//b", "a/", "a\\b"]
)
def test_paths_leaving_or_naming_the_folder_itself_are_refused(path: str) -> None:
    with pytest.raises(ValidationError):
        TypeAdapter(RelativePath).validate_python(path)


# --- names against registries ------------------------------------------------------------


def test_templates_use_known_bare_placeholders_only() -> None:
    assert check_template("{workspace}/x {{literal}}") == "{workspace}/x {{literal}}"
    for bad in ("{nope}", "{workspace.__class__}", "{workspace[0]}", "{0}", "{}", "{x", "}"):
        with pytest.raises(ValueError, match=r"placeholder|malformed"):
            check_template(bad)


def test_every_backend_fills_registry_placeholders_only() -> None:
    from recon.sandbox.docker import container_placeholders

    assert set(container_placeholders(60)) == set(PLACEHOLDERS)


def _entry(change: dict[str, Any], path: Path = ENTRY) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    for key, value in change.items():
        data["agent"][key] = value
    return data


def test_trace_is_a_docker_placeholder() -> None:
    data = _entry({"command": ["{python}", "{trace}"]})
    with pytest.raises(ValidationError) as err:
        Entry.model_validate(data)
    assert err.value.errors()[0]["loc"] == ("agent", "command", 1)
    Entry.model_validate(_entry({"command": ["run", "{trace}"]}, DOCKER_ENTRY))


@pytest.mark.parametrize("name", ["LD_PRELOAD", "LD_BIND_NOW", "PATH", "PYTHONPATH", "BASH_ENV"])
def test_loader_variables_are_neither_set_nor_forwarded(name: str) -> None:
    for change in ({"set_env": {name: "x"}}, {"env": [name]}):
        with pytest.raises(ValidationError, match="changes what programs load"):
            Entry.model_validate(_entry(change, DOCKER_ENTRY))


def test_grading_names_checked_against_the_contract() -> None:
    contract = Contract.model_validate(
        {"routes": ["/", "/list"], "viewports": ["desktop"], "build": {"output": "site"}}
    )
    check = {"id": "c", "assertions": [{"id": "a", "locator": {"text": "x"}, "expect": "visible"}]}
    grading = Grading.model_validate(
        {
            "weights": {**dict.fromkeys(DIMENSIONS, 0.0), "functional": 1.0},
            "regions": [{"id": "r", "box": [0, 0, 10, 10], "viewport": "mobile"}],
            "workflows": [
                {
                    "id": "w",
                    "route": "/list",
                    "viewport": "tablet",
                    "steps": [
                        {"goto": "/gone"},
                        check | {"preserve": "navigate", "navigate_to": "/away"},
                    ],
                },
            ],
        }
    )
    problems = against_contract(grading, contract)
    assert [p.split(":")[0] for p in problems] == [
        "regions[0].viewport",
        "workflows[0].viewport",
        "workflows[0].steps[0].goto",
        "workflows[0].steps[1].navigate_to",
    ]
    assert all("; use one of them or add it to public/contract.yaml" in p for p in problems)


def test_an_agent_file_linking_out_of_entries_is_refused(tmp_path: Path) -> None:
    entries = tmp_path / "entries"
    (entries / "scripted").mkdir(parents=True)
    (entries / "scripted" / "faithful.py").symlink_to(REPO / "cases/todomvc/sealed/grading.yaml")
    data = _entry({"files": ["scripted/faithful.py"]})
    (entries / "scripted-faithful.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match=r"agent\.files\[0\]: .* a link leading out of entries/"):
        _ = Project(root=tmp_path, store_root=tmp_path / "store").entries
