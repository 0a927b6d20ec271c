"""Loading the file formats: the repo's real files load; each bad input is one clear error."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blake3
import pytest
import yaml

from recon.errors import ConfigError
from recon.model import (
    Case,
    Contract,
    Entry,
    Grading,
    Provenance,
    ReleaseDef,
    Versioned,
    load_yaml,
)
from recon.model.grading import DIMENSIONS

REPO = Path(__file__).resolve().parents[2]
CASE = REPO / "cases" / "html5-boilerplate"
ENTRY = REPO / "entries" / "scripted-faithful.yaml"
RELEASE = REPO / "releases" / "demo.yaml"
GRADING = CASE / "sealed" / "grading.yaml"

REAL_FILES: list[tuple[type[Versioned], Path]] = [
    *[(Entry, p) for p in sorted((REPO / "entries").glob("*.yaml"))],
    (Case, CASE / "case.yaml"),
    (Contract, CASE / "public" / "contract.yaml"),
    (Grading, GRADING),
    (Provenance, CASE / "provenance.yaml"),
    (ReleaseDef, RELEASE),
]


# the real files ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "path"), REAL_FILES, ids=[str(p.relative_to(REPO)) for _, p in REAL_FILES]
)
def test_real_repo_files_load(model: type[Versioned], path: Path) -> None:
    loaded = load_yaml(model, path)
    assert isinstance(loaded, model)
    assert loaded.schema_version == model.SCHEMA_VERSION


def test_there_are_real_entries_to_load() -> None:
    assert len([m for m, _ in REAL_FILES if m is Entry]) >= 3


def test_real_files_have_the_expected_content() -> None:
    entry = load_yaml(Entry, ENTRY)
    assert (entry.id, entry.agent.version, entry.budget.cpus) == ("scripted-faithful", "1", 1)
    release = load_yaml(ReleaseDef, RELEASE)
    assert release.cases[0] == "html5-boilerplate"
    assert (release.protocol.backend, release.protocol.formal) == ("native", False)
    grading = load_yaml(Grading, GRADING)
    assert sum(grading.weights.values()) == pytest.approx(1.0)
    assert load_yaml(Case, CASE / "case.yaml").id == CASE.name


def test_provenance_digests_match_the_sealed_reference() -> None:
    provenance = load_yaml(Provenance, CASE / "provenance.yaml")
    reference = CASE / "sealed" / "reference"
    on_disk = {
        p.relative_to(CASE).as_posix(): blake3.blake3(p.read_bytes()).hexdigest()
        for p in sorted(reference.rglob("*"))
        if p.is_file()
    }
    pinned = {a.path: a.blake3 for a in provenance.artifacts}
    assert on_disk, "sealed/reference is empty"
    assert pinned == on_disk


# bad inputs --------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Copies of the real files under tmp_path, which is the current folder."""
    for src in (ENTRY, RELEASE, GRADING):
        dest = tmp_path / src.relative_to(REPO)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def mutate(path: Path, change: Callable[[dict[str, Any]], object]) -> Path:
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def load_error(model: type[Versioned], path: Path) -> str:
    with pytest.raises(ConfigError) as err:
        load_yaml(model, path)
    assert err.value.exit_code == 2
    message = str(err.value)
    assert "\n" not in message, "one message, one line"
    return message


ENTRY_REL = "entries/scripted-faithful.yaml"
RELEASE_REL = "releases/demo.yaml"
GRADING_REL = "cases/html5-boilerplate/sealed/grading.yaml"


def test_baseline_copies_load(project: Path) -> None:
    load_yaml(Entry, project / ENTRY_REL)
    load_yaml(ReleaseDef, project / RELEASE_REL)
    load_yaml(Grading, project / GRADING_REL)


def test_missing_field(project: Path) -> None:
    path = mutate(project / ENTRY_REL, lambda d: d["agent"].pop("version"))
    message = load_error(Entry, path)
    assert message.startswith(f"{ENTRY_REL}: agent.version: field required")


def test_wrong_type(project: Path) -> None:
    path = mutate(project / ENTRY_REL, lambda d: d["budget"].update(cpus="lots"))
    message = load_error(Entry, path)
    assert message.startswith(f"{ENTRY_REL}: budget.cpus: ")
    assert "number" in message  # what was expected
    assert "'lots'" in message  # what it got


def test_out_of_range_value_in_a_list(project: Path) -> None:
    path = mutate(project / ENTRY_REL, lambda d: d["agent"].update(command=[]))
    message = load_error(Entry, path)
    assert message.startswith(f"{ENTRY_REL}: agent.command: ")
    assert "at least 1" in message


def test_unknown_top_level_key(project: Path) -> None:
    path = mutate(project / ENTRY_REL, lambda d: d.update(runtim=d.pop("runtime")))
    message = load_error(Entry, path)
    assert message.startswith(f"{ENTRY_REL}: runtim: unknown key")


def test_unknown_nested_key(project: Path) -> None:
    path = mutate(project / RELEASE_REL, lambda d: d["protocol"].update(repeat=3))
    message = load_error(ReleaseDef, path)
    assert message.startswith(f"{RELEASE_REL}: protocol.repeat: unknown key")


def test_typo_of_a_required_key_names_the_unknown_key(project: Path) -> None:
    path = mutate(project / ENTRY_REL, lambda d: d.update(modle=d.pop("model")))
    message = load_error(Entry, path)
    assert "modle: unknown key" in message


def test_several_problems_are_one_message_that_counts_the_rest(project: Path) -> None:
    def two_problems(d: dict[str, Any]) -> None:
        d["agent"].pop("version")
        d["budget"]["cpus"] = "lots"

    message = load_error(Entry, mutate(project / ENTRY_REL, two_problems))
    assert message.startswith(f"{ENTRY_REL}: agent.version: field required")
    assert message.endswith("(and 1 more problem)")


def test_malformed_yaml_names_the_line(project: Path) -> None:
    path = project / ENTRY_REL
    lines = path.read_text().splitlines()
    lines.insert(3, "tool_profile: none: extra")  # becomes line 4
    path.write_text("\n".join(lines) + "\n")
    message = load_error(Entry, path)
    assert message.startswith(f"{ENTRY_REL}: malformed YAML: line 4, column ")
    assert "mapping values are not allowed" in message


def test_top_level_must_be_a_mapping(project: Path) -> None:
    path = project / ENTRY_REL
    path.write_text("- just\n- a list\n")
    message = load_error(Entry, path)
    assert message.startswith(f"{ENTRY_REL}: expected a mapping")


def test_missing_file(project: Path) -> None:
    message = load_error(Entry, project / "entries" / "nope.yaml")
    assert message == "entries/nope.yaml: file not found"


def test_unsupported_schema_version(project: Path) -> None:
    path = mutate(project / ENTRY_REL, lambda d: d.update(schema_version=99))
    message = load_error(Entry, path)
    assert message.startswith(f"{ENTRY_REL}: schema_version: ")
    assert "99" in message
    assert f"reads {Entry.SCHEMA_VERSION}" in message


def test_unsupported_schema_version_is_reported_before_other_problems(project: Path) -> None:
    """A file from a newer recon has new keys: the version, not a key, is the problem."""
    path = mutate(project / ENTRY_REL, lambda d: d.update(schema_version=2, brand_new={"x": 1}))
    message = load_error(Entry, path)
    assert message.startswith(f"{ENTRY_REL}: schema_version: ")
    assert "unsupported schema_version 2" in message


def weighted(**given: float) -> dict[str, float]:
    """Every dimension's weight written out: ``given``, and 0 for the rest."""
    return {name: given.get(name, 0.0) for name in DIMENSIONS}


def test_grading_weights_must_sum_to_one(project: Path) -> None:
    path = mutate(
        project / GRADING_REL,
        lambda d: d.update(weights=weighted(global_visual=0.7, functional=0.2)),
    )
    message = load_error(Grading, path)
    assert message.startswith(f"{GRADING_REL}: weights: ")
    assert "sum to 1" in message
    assert "0.9" in message


def test_grading_weights_name_known_dimensions(project: Path) -> None:
    path = mutate(
        project / GRADING_REL, lambda d: d.update(weights={"global_visual": 0.7, "vibes": 0.3})
    )
    message = load_error(Grading, path)
    assert message.startswith(f"{GRADING_REL}: weights.vibes")


@pytest.mark.parametrize("left_out", DIMENSIONS)
def test_a_grading_that_leaves_out_a_weight_is_refused_naming_it(
    project: Path, left_out: str
) -> None:
    """A weight of 0 is written out, never assumed: a left-out dimension would drop out of
    the total without anyone having decided it."""
    weights = {name: 1 / 6 for name in DIMENSIONS if name != left_out}  # they sum to 1
    path = mutate(project / GRADING_REL, lambda d: d.update(weights=weights))
    message = load_error(Grading, path)
    assert message == (
        f"{GRADING_REL}: weights.{left_out}: no weight; write `{left_out}: 0` if it does not "
        "count (a weight is never assumed)"
    )


def test_a_grading_that_leaves_out_several_weights_names_the_first_and_counts_the_rest(
    project: Path,
) -> None:
    path = mutate(project / GRADING_REL, lambda d: d.update(weights={"global_visual": 1.0}))
    message = load_error(Grading, path)
    assert message.startswith(f"{GRADING_REL}: weights.regional_visual: no weight; write ")
    assert message.endswith("(and 5 more problems)") and "\n" not in message


def test_a_weight_of_zero_written_out_loads(project: Path) -> None:
    path = mutate(project / GRADING_REL, lambda d: d.update(weights=weighted(functional=1.0)))
    assert load_yaml(Grading, path).weights == weighted(functional=1.0)


def test_every_case_writes_out_every_weight() -> None:
    """The rule holds for the sealed material in the repository (no case relied on a
    default): each case's grading loads and names all seven dimensions."""
    paths = sorted(REPO.glob("cases/*/sealed/grading.yaml"))
    assert len(paths) >= 10
    for path in paths:
        assert sorted(load_yaml(Grading, path).weights) == sorted(DIMENSIONS), path


def test_formal_protocol_with_native_backend(project: Path) -> None:
    path = mutate(project / RELEASE_REL, lambda d: d["protocol"].update(formal=True))
    message = load_error(ReleaseDef, path)
    assert message.startswith(f"{RELEASE_REL}: protocol: ")
    assert "formal" in message and "docker" in message


def test_formal_protocol_with_docker_backend_is_fine(project: Path) -> None:
    path = mutate(
        project / RELEASE_REL, lambda d: d["protocol"].update(formal=True, backend="docker")
    )
    release = load_yaml(ReleaseDef, path)
    assert release.protocol.formal


def test_message_names_an_absolute_path_outside_the_current_folder(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "entry.yaml"
    shutil.copy2(project / ENTRY_REL, elsewhere)
    mutate(elsewhere, lambda d: d["agent"].pop("version"))
    message = load_error(Entry, elsewhere)
    assert message.startswith(f"{elsewhere}: agent.version: field required")
