"""A preference study on disk: real pages, their reconstructions, two raters' judgements.

The layout (issue 28; ``../shared/prefs/real-reconstructions`` is one such study)::

    <study>/pages/<page>/original.html     the real page
    <study>/pages/<page>/<method>.html     one reconstruction of it per method
    <study>/judgments.jsonl                one :class:`StudyJudgement` per line

:func:`read_study` checks the whole directory at once and raises one
:class:`~recon.errors.ConfigError` (exit 2) naming each bad file, line and field: a
malformed line, an unknown choice, a consensus the raters do not give, a page or method
that has no file. :func:`consensus` gives the pairs both raters decided the same way (ties
and disagreements left out); :func:`preferences` turns the judgements into recon's
preference rows (:class:`~recon.model.Judgement`, one per rater), naming each
reconstruction by its render's digest.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from recon.calibrate.rows import Where, fail, read
from recon.errors import ConfigError
from recon.model import Judgement
from recon.model.base import shown
from recon.model.preferences import Choice
from recon.model.study import StudyJudgement
from recon.store import digest_bytes

JUDGMENTS = "judgments.jsonl"
PAGES = "pages"
ORIGINAL = "original"
POINT = "root.desktop.default"
"""The matrix point a study's renders stand for: route ``/`` at the desktop viewport."""
TIME = "1970-01-01T00:00:00Z"
"""A study's judgements carry no time; their preference rows all get this one."""
CHOICE: dict[str, Choice] = {"a": "left", "b": "right", "tie": "tie"}


@dataclass(frozen=True)
class Study:
    """A checked study: every judged page's files and the judgements, in file order."""

    root: Path
    pages: Mapping[str, Path]  # "<page>/<method>" -> its HTML file, originals included
    judgements: list[tuple[Where, StudyJudgement]]


@dataclass(frozen=True)
class Pair:
    """A judged pair both raters decided the same way: ``winner`` +1 for ``a``, -1 for ``b``."""

    page: str
    a: str
    b: str
    winner: int


def name(page: str, method: str) -> str:
    """A page's file as :attr:`Study.pages` names it."""
    return f"{page}/{method}"


def read_study(root: Path) -> Study:
    """The study at ``root``, checked (module docstring), or one ConfigError."""
    folder, judgments = root / PAGES, root / JUDGMENTS
    for needed, what in ((folder, "folder"), (judgments, "file")):
        exists = needed.is_dir() if what == "folder" else needed.is_file()
        if not exists:
            raise ConfigError(
                f"{shown(needed)}: no such {what}; a study holds {PAGES}/<page>/<method>.html "
                f"and {JUDGMENTS}"
            )
    rows = read([judgments], StudyJudgement)
    problems: list[str] = []
    pages: dict[str, Path] = {}
    missing: set[Path] = set()  # each named once, at the first line that needs it
    for (source, number), row in rows:
        for field, method in (("page", ORIGINAL), ("a", row.a), ("b", row.b)):
            html = folder / row.page / f"{method}.html"
            if html in missing:
                continue
            if not html.is_file():
                missing.add(html)
                problems.append(
                    f"{source}:{number}: {field}: {shown(html)} does not exist; "
                    "fix the judgement or add the page"
                )
                continue
            pages[name(row.page, method)] = html
    fail(problems)
    return Study(root, dict(sorted(pages.items())), rows)


def consensus(study: Study) -> list[Pair]:
    """The pairs whose two raters chose the same reconstruction, in file order."""
    winner = {"a": 1, "b": -1}
    return [
        Pair(row.page, row.a, row.b, winner[row.consensus])
        for _, row in study.judgements
        if row.consensus in winner
    ]


def rater_id(study: str, rater: str) -> str:
    """A rater's preference-row id: ``r`` and 16 hex digits of the study and column."""
    return "r" + digest_bytes(f"{study}:{rater}".encode())[:16]


def preferences(
    study: Study, release: str, digests: Mapping[str, str]
) -> tuple[list[Judgement], int]:
    """One preference row per rater and judgement (left ``a``, right ``b``; the captures
    named by ``digests[name(page, method)]``), and how many judgements were left out
    because their two reconstructions render to the same still (a row compares two)."""
    rows: list[Judgement] = []
    same = 0
    for (_, number), row in study.judgements:
        left, right = digests[name(row.page, row.a)], digests[name(row.page, row.b)]
        if left == right:
            same += 1
            continue
        for rater in ("rater_1", "rater_2"):
            rows.append(
                Judgement(
                    release=release,
                    case=case_id(row.page),
                    point=POINT,
                    left=left,
                    right=right,
                    choice=CHOICE[getattr(row, rater)],
                    rater=rater_id(release, rater),
                    time=TIME,
                    seed=number,
                    pair=f"p{number:04d}",
                )
            )
    return rows, same


def case_id(page: str) -> str:
    """A page folder as a case id (lower case; other characters than ``a-z0-9-`` become
    ``-``)."""
    cleaned = "".join(c if c.isalnum() and c.isascii() else "-" for c in page.lower())
    return f"page-{cleaned}"
