"""The base of every file format: strict fields, a schema_version, one clear error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from recon.errors import ConfigError

M = TypeVar("M", bound="Versioned")


class Strict(BaseModel):
    """Unknown keys are errors; values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Versioned(Strict):
    """A top-level file format. ``SCHEMA_VERSION`` is the only version this recon reads."""

    SCHEMA_VERSION: ClassVar[int] = 1
    schema_version: int = 1

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value != cls.SCHEMA_VERSION:
            raise ValueError(
                f"unsupported schema_version {value}; this recon reads {cls.SCHEMA_VERSION}"
            )
        return value


def _loc(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def describe(error: ValidationError, source: str) -> str:
    """One line per problem: ``file: field.path: what was expected (got X)``."""
    lines = []
    # An unknown key first: a misspelt key also shows up as the required one it should be.
    errors = sorted(error.errors(), key=lambda e: e["type"] != "extra_forbidden")
    for item in errors:
        where = _loc(tuple(item["loc"]))
        msg = item["msg"]
        if item["type"] == "extra_forbidden":
            msg = "unknown key; remove it or check its spelling"
        elif item["type"] == "missing":
            msg = "field required; add it"
        got = item.get("input")
        suffix = "" if item["type"] in ("missing", "extra_forbidden") else f" (got {got!r})"
        lines.append(f"{source}: {where}: {msg}{suffix}")
    first = lines[0]
    more = len(lines) - 1
    return first + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def validate(model: type[M], data: Any, source: str) -> M:
    """Validate already-parsed data, turning pydantic errors into one ConfigError."""
    if not isinstance(data, dict):
        raise ConfigError(
            f"{source}: expected a mapping at the top level, got {type(data).__name__}"
        )
    version = data.get("schema_version", model.SCHEMA_VERSION)
    if version != model.SCHEMA_VERSION:  # a newer file's new keys are not the problem
        raise ConfigError(
            f"{source}: schema_version: unsupported schema_version {version!r}; this recon reads "
            f"{model.SCHEMA_VERSION} (upgrade recon or convert the file)"
        )
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ConfigError(describe(err, source)) from None


def read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{shown(path)}: file not found") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        problem = getattr(err, "problem", None) or str(err)
        raise ConfigError(f"{shown(path)}: malformed YAML: {where}{problem}") from None


def shown(path: Path) -> str:
    """A path as a person would type it: relative to the current folder when inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def load_yaml(model: type[M], path: Path) -> M:
    """Load and validate a YAML file; any problem is one ConfigError (exit 2)."""
    return validate(model, read_yaml(path), shown(path))


def load_json(model: type[M], path: Path) -> M:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: file not found") from None
    except json.JSONDecodeError as err:
        raise ConfigError(f"{path}: malformed JSON: line {err.lineno}: {err.msg}") from None
    return validate(model, data, str(path))
