"""Reading preference JSONL: every bad row is named by file and line, all at once.

``read`` parses and validates each line with its model (malformed JSON, an unknown
choice, a missing field...); ``check`` then holds the judgements against the release's
captures: an unknown capture digest, a pair whose captures are of different matrix points
(or of another point than the row names), another release, and a duplicate judgement
(the same showing — rater, seed and captures — twice). Any problem is one
:class:`~recon.errors.ConfigError` listing each problem on its own line (exit 2).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from recon.calibrate.scores import Shot
from recon.errors import ConfigError
from recon.model import Judgement
from recon.model.base import Versioned, describe, shown

M = TypeVar("M", bound=Versioned)
MAX_PROBLEMS = 20
Where = tuple[str, int]  # file, line


def fail(problems: list[str]) -> None:
    """Raise one ConfigError of at most ``MAX_PROBLEMS`` lines, when there is a problem."""
    if not problems:
        return
    more = len(problems) - MAX_PROBLEMS
    tail = [f"... and {more} more problem(s)"] if more > 0 else []
    raise ConfigError("\n".join(problems[:MAX_PROBLEMS] + tail))


def read(paths: list[Path], model: type[M]) -> list[tuple[Where, M]]:
    rows: list[tuple[Where, M]] = []
    problems: list[str] = []
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            problems.append(f"{shown(path)}: cannot be read ({err}); pass a UTF-8 JSONL file")
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"{shown(path)}:{number}"
            try:
                data = json.loads(line)
            except json.JSONDecodeError as err:
                problems.append(
                    f"{where}: malformed JSON ({err.msg} at column {err.colno}); "
                    "write one JSON object per line"
                )
                continue
            if not isinstance(data, dict):
                problems.append(f"{where}: expected a JSON object, got {type(data).__name__}")
                continue
            try:
                rows.append(((shown(path), number), model.model_validate(data)))
            except ValidationError as err:
                problems.append(describe(err, where))
    fail(problems)
    if not rows:
        raise ConfigError(f"{', '.join(map(shown, paths))}: no judgement in the file(s)")
    return rows


def _point_of(table: Mapping[tuple[str, str, str], Shot], digest: str) -> str | None:
    return next((f"{c}/{p}" for (c, p, d) in table if d == digest), None)


def _capture_problem(row: Judgement, table: Mapping[tuple[str, str, str], Shot]) -> str | None:
    here = f"{row.case}/{row.point}"
    at = {side: _point_of(table, getattr(row, side)) for side in ("left", "right")}
    for side in ("left", "right"):
        if at[side] is None:
            return (
                f"{side}: unknown capture digest {getattr(row, side)[:16]}… (no graded "
                f"capture of release {row.release} has it); drop the row or fix the release"
            )
    if at["left"] != at["right"]:
        return (
            f"left and right are captures of different matrix points ({at['left']} and "
            f"{at['right']}); a pair compares two captures of one point: drop the row"
        )
    for side in ("left", "right"):
        if (row.case, row.point, getattr(row, side)) not in table:
            return f"{side}: the capture is of point {at[side]}, not {here}; fix case/point"
    return None


def check(
    rows: list[tuple[Where, Judgement]],
    release: str,
    table: Mapping[tuple[str, str, str], Shot],
) -> list[Judgement]:
    """The rows, once each holds up against the release's captures (else one error)."""
    problems: list[str] = []
    seen: dict[tuple[str, int, str, str], Where] = {}
    for (path, number), row in rows:
        where = f"{path}:{number}"
        if row.release != release:
            problems.append(
                f"{where}: release: {row.release!r}, not {release!r}; fit one "
                "release's judgements at a time (--release)"
            )
            continue
        problem = _capture_problem(row, table)
        if problem:
            problems.append(f"{where}: {problem}")
            continue
        low, high = sorted((row.left, row.right))
        key = (row.rater, row.seed, low, high)
        if key in seen:
            first = seen[key]
            problems.append(
                f"{where}: duplicate judgement: the same showing (rater, seed and "
                f"captures) as {first[0]}:{first[1]}; remove one of them"
            )
            continue
        seen[key] = (path, number)
    fail(problems)
    return [row for _, row in rows]
