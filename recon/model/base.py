"""The base of every file format: strict fields, a schema_version, one clear error."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from recon.errors import ConfigError
from recon.model._yaml import MAX_JSON_BYTES, oneline, parse_json, parse_yaml, read_text

M = TypeVar("M", bound="Versioned")


class Strict(BaseModel):
    """Unknown keys are errors; values are immutable once loaded; no float is NaN or
    infinite."""

    # defer_build: a model's validator is built on its first use, not at import, so a
    # process that reads two formats (a no-op build: the progress snapshot) does not pay
    # for all of them (issue 16).
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)


class Versioned(Strict):
    """A top-level file format. ``SCHEMA_VERSION`` is the version this recon writes; it also
    reads the versions in ``MIGRATES_FROM``, which a ``mode="before"`` validator of the
    model converts."""

    SCHEMA_VERSION: ClassVar[int] = 1
    MIGRATES_FROM: ClassVar[tuple[int, ...]] = ()
    schema_version: int = 1

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value != cls.SCHEMA_VERSION:
            raise ValueError(
                f"unsupported schema_version {value}; this recon reads {cls.SCHEMA_VERSION}"
            )
        return value


def omit_none(data: dict[str, Any], *names: str) -> dict[str, Any]:
    """``data`` without those of ``names`` that are None: a field added to a format later is
    left out where unknown, so the bytes of what was written before it stay as they were."""
    for name in names:
        if data.get(name) is None:
            data.pop(name, None)
    return data


def _loc(loc: tuple[int | str, ...]) -> str:
    """``a.b[0].c``; a union member's label (``(step)``, ``function-after[…]``) and a
    dict key's ``[key]`` marker are not fields a person wrote, so they are left out."""
    out = ""
    for part in loc:
        if isinstance(part, str) and _not_a_field(part):
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return oneline(out, 160) or "(top level)"


def _not_a_field(part: str) -> bool:
    return part == "[key]" or (part.startswith("(") and part.endswith(")")) or "[" in part


def union_tag(name: str) -> str:
    """The tag of a discriminated union member, which error locations leave out."""
    return f"({name})"


_BOUNDS = {
    "greater_than": ("gt", "greater than"),
    "greater_than_equal": ("ge", "at least"),
    "less_than": ("lt", "less than"),
    "less_than_equal": ("le", "at most"),
}
_SCALARS = (str, int, float, bool, type(None))
_FIXED = {
    "extra_forbidden": "unknown key; remove it or check its spelling",
    "missing": "field required; add it",
    "finite_number": "must be a finite number, not NaN or infinity; write a plain number",
    "int_parsing": "must be a whole number; write one, like 3",
    "int_type": "must be a whole number; write one, like 3",
    "int_from_float": "must be a whole number; drop the fraction",
    "float_parsing": "must be a number; write one, like 0.5",
    "float_type": "must be a number; write one, like 0.5",
    "string_type": "must be text; write it as a string",
    "bool_parsing": "must be true or false; write one of them",
    "bool_type": "must be true or false; write one of them",
    "list_type": "must be a list; write it as [a, b] or as `- a` lines",
    "tuple_type": "must be a list; write it as [a, b] or as `- a` lines",
    "dict_type": "must be a mapping; write it as `key: value` lines",
    "model_type": "must be a mapping; write it as `key: value` lines",
    "model_attributes_type": "must be a mapping; write it as `key: value` lines",
}
_SIZES = {
    "string_too_long": "too long: at most {max_length} characters; shorten it",
    "string_too_short": "too short: at least {min_length} characters; add to it",
    "too_long": "too many items: at most {max_length}; remove some",
    "too_short": "too few items: at least {min_length}; add some",
    "literal_error": "must be {expected}; use one of them",
    "enum": "must be {expected}; use one of them",
    "string_pattern_mismatch": "must match {pattern}; change it to match",
}


def _problem(item: Any) -> str:
    """What is wrong and what to do, for one pydantic error."""
    kind, ctx = item["type"], item.get("ctx") or {}
    if kind in _FIXED:
        return _FIXED[kind]
    if kind in _BOUNDS and _BOUNDS[kind][0] in ctx:
        key, words = _BOUNDS[kind]
        return f"out of range: must be {words} {ctx[key]}; use a value in range"
    if kind in _SIZES:
        try:
            return oneline(_SIZES[kind].format(**ctx), 600)
        except (KeyError, IndexError):
            pass
    message = oneline(str(item["msg"]).removeprefix("Value error, "), 600)
    return message if ";" in message else f"{message}; fix the value"


def describe(error: ValidationError, source: str) -> str:
    """One bounded line: ``file: field.path: what is wrong; the fix (got X)``."""
    lines = []
    # An unknown key first: a misspelt key also shows up as the required one it should be.
    errors = sorted(error.errors(), key=lambda e: e["type"] != "extra_forbidden")
    for item in errors:
        where = _loc(tuple(item["loc"]))
        got = item.get("input")
        shows = item["type"] not in ("missing", "extra_forbidden") and isinstance(got, _SCALARS)
        suffix = f" (got {oneline(repr(got), 80)})" if shows else ""
        lines.append(f"{source}: {where}: {_problem(item)}{suffix}")
    first = lines[0]
    more = len(lines) - 1
    return first + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def validate(model: type[M], data: Any, source: str) -> M:
    """Validate already-parsed data, turning pydantic errors into one ConfigError."""
    if not isinstance(data, dict):
        got = "an empty file" if data is None else f"a {type(data).__name__}"
        raise ConfigError(
            f"{source}: expected a mapping at the top level, got {got}; "
            "write the file as `key: value` lines"
        )
    version = data.get("schema_version", model.SCHEMA_VERSION)
    if version != model.SCHEMA_VERSION and version not in model.MIGRATES_FROM:
        # a newer file's new keys are not the problem
        raise ConfigError(
            f"{source}: schema_version: unsupported schema_version {oneline(repr(version), 40)}; "
            f"this recon reads {model.SCHEMA_VERSION} (upgrade recon or convert the file)"
        )
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ConfigError(describe(err, source)) from None


def read_yaml(path: Path) -> Any:
    """A YAML input file as Python values: at most 1 MiB of UTF-8, no duplicate keys and a
    small alias budget (``recon.model._yaml``); any problem is one ConfigError."""
    where = shown(path)
    return parse_yaml(read_text(path, where), where)


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
    """Load and validate a JSON file the harness wrote (release JSON, manifest)."""
    text = read_text(path, str(path), MAX_JSON_BYTES)
    return validate(model, parse_json(text, str(path)), str(path))
