"""Pair choice, bad preference rows and rater checks (fast, pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.calibrate.pairs import candidates, choose
from recon.calibrate.raters import rate
from recon.calibrate.rows import check, read
from recon.calibrate.scores import by_digest
from recon.errors import ConfigError
from recon.model import Judgement
from tests.calibrate.factories import digest, row, shot


def test_pairs_are_of_one_point_and_different_entries_with_repeats_later() -> None:
    found = [shot(i, entry=f"e{i % 3}", value=i / 10) for i in range(6)]
    found += [shot(10 + i, point="root.mobile.default", value=i / 10) for i in range(3)]
    pool = candidates(found)
    assert all(a.point == b.point and a.entry != b.entry for a, b in pool)
    chosen = choose(found, 12, seed=4)
    assert chosen == choose(found, 12, seed=4)  # seeded
    assert [c.id for c in chosen] == [f"p{i:04d}" for i in range(1, 13)]
    first = {c.id: i for i, c in enumerate(chosen)}
    repeats = [c for c in chosen if c.repeat_of]
    assert repeats and all(first[c.repeat_of] < first[c.id] for c in repeats)  # type: ignore[index]
    assert all(c.left.point == c.right.point and c.left.digest != c.right.digest for c in chosen)


def test_bad_rows_each_named_by_line(tmp_path: Path) -> None:
    table = by_digest([shot(1), shot(2), shot(3, point="root.mobile.default"), shot(4)])
    good = row(1, 2).model_dump_json()
    lines = [
        good,
        row(1, 99).model_dump_json(),  # unknown capture
        good,  # duplicate
        "{not json",
        good.replace('"left"', '"maybe"', 1).replace('"choice":"maybe"', '"choice":"maybe"'),
        row(1, 3).model_dump_json(),  # different matrix points
    ]
    lines[4] = row(2, 4).model_dump_json().replace('"choice":"left"', '"choice":"maybe"')
    path = tmp_path / "prefs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConfigError) as parsed:
        read([path], Judgement)
    message = str(parsed.value)
    assert "prefs.jsonl:4: malformed JSON" in message
    assert "prefs.jsonl:5: choice" in message and "'left', 'right', 'tie' or 'both-bad'" in message
    path.write_text("\n".join([*lines[:3], lines[5]]) + "\n")
    with pytest.raises(ConfigError) as checked:
        check(read([path], Judgement), "demo", table)
    problems = str(checked.value).splitlines()
    assert any(
        p.startswith(f"{path}:2: left: unknown capture digest")
        or ":2: right: unknown capture digest" in p
        for p in problems
    ), problems
    assert any(":3: duplicate judgement" in p and ":1" in p for p in problems), problems
    assert any(
        ":4: left and right are captures of different matrix points" in p for p in problems
    ), problems
    assert len(problems) == 3


def test_a_random_rater_is_flagged_a_consistent_one_is_not() -> None:
    rows = []
    for n in range(8):  # each pair twice; the steady rater repeats themself, sides swapped
        rows.append(row(1, 2 + n, "left", rater="r0000000a", seed=n))
        rows.append(row(2 + n, 1, "right", rater="r0000000a", seed=100 + n))
        rows.append(row(1, 2 + n, "left", rater="r0000000b", seed=n))
        rows.append(
            row(1, 2 + n, ["right", "tie", "both-bad"][n % 3], rater="r0000000b", seed=100 + n)
        )
    rated = {r.rater: r for r in rate(rows)}
    assert rated["r0000000a"].consistency == 1.0 and not rated["r0000000a"].flagged
    assert rated["r0000000b"].consistency == 0.0 and rated["r0000000b"].flagged
    assert rated["r0000000b"].both_bad == pytest.approx(2 / 16)
    assert digest(1) != digest(2)


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        ("truncated", "prefs.jsonl:2: malformed JSON"),
        ("garbage", "prefs.jsonl: cannot be read"),
        ("shape", "prefs.jsonl:2: expected a JSON object, got list"),
        ("empty", "prefs.jsonl: no judgement in the file(s)"),
    ],
)
def test_a_damaged_preference_file_is_refused_never_read_in_part(
    tmp_path: Path, damage: str, expected: str
) -> None:
    """A fit from part of a file would be a calibration from fewer judgements than given."""
    good = row(1, 2).model_dump_json()
    path = tmp_path / "prefs.jsonl"
    body = {
        "truncated": (good + "\n" + good[: len(good) // 2]).encode(),
        "garbage": b"\xff\xfe" + bytes(range(128, 256)),
        "shape": (good + "\n[]\n").encode(),
        "empty": b"\n\n",
    }[damage]
    path.write_bytes(body)
    with pytest.raises(ConfigError) as found:
        read([path], Judgement)
    assert expected in str(found.value)
