"""A page's export and its sealed key, joined into preference rows (:class:`Judgement`).

The export names pairs by their opaque page ids; the key (``pairs.key.json``, beside the
page folder) maps each to its release, case, point, left and right capture digests and
seed. An export row whose session is not the key's, or whose pair the key does not hold,
is an error naming its file and line.
"""

from __future__ import annotations

from pathlib import Path

from recon.calibrate.rows import Where, fail
from recon.model import Judgement, PageJudgement, PairKey


def join(key: PairKey, rows: list[tuple[Where, PageJudgement]], key_path: Path) -> list[Judgement]:
    problems: list[str] = []
    joined: list[Judgement] = []
    for (path, number), row in rows:
        where = f"{path}:{number}"
        if row.session != key.session:
            problems.append(
                f"{where}: session: {row.session} is not the session of {key_path} "
                f"({key.session}); pass the key written with this page"
            )
            continue
        pair = key.pairs.get(row.pair)
        if pair is None:
            problems.append(
                f"{where}: pair: {row.pair} is not in {key_path}; the page and "
                "the key must come from the same `recon calibrate collect`"
            )
            continue
        joined.append(
            Judgement(
                release=key.release,
                case=pair.case,
                point=pair.point,
                left=pair.left,
                right=pair.right,
                choice=row.choice,
                rater=row.rater,
                time=row.time,
                seed=pair.seed,
                pair=row.pair,
                repeat_of=pair.repeat_of,
            )
        )
    fail(problems)
    return joined
