"""index.html: banner, leaderboard, score chart, per-case scores, reliability, attempts."""

from __future__ import annotations

from recon.model.records import EntryResult, ReleaseResult
from recon.site._html import Html, document, join, link, num, section, table, tag

CHART_LABEL_W = 220
CHART_BAR_W = 400
CHART_ROW_H = 24


def _order(entry: EntryResult) -> tuple[bool, int, float, str]:
    """Ranked entries by rank, then unranked by score (highest first), then by name."""
    score = entry.score if entry.score is not None and entry.score == entry.score else -1.0
    return (entry.rank is None, entry.rank or 0, -score, entry.entry)


def _banner(result: ReleaseResult) -> Html:
    if result.formal:
        cls, label = "formal", "Formal release"
    else:
        cls, label = "informal", "Non-formal release"
    text = join([tag("strong", label), result.formal_note], " — ")
    return tag("div", text, class_=f"banner {cls}")


def _status(entry: EntryResult, active: int) -> str:
    if entry.ranked:
        return "ranked"
    return f"unranked: covers {entry.covered} of {active} active cases"


def _leaderboard(result: ReleaseResult, entries: list[EntryResult]) -> Html:
    active = len(result.active_cases)
    rows = [
        (
            e.rank,
            e.entry,
            e.model,
            e.agent,
            num(e.score),
            f"{e.covered}/{active}",
            _status(e, active),
        )
        for e in entries
    ]
    headers = ["rank", "entry", "model", "agent", "score", "covered cases", "status"]
    note = tag(
        "p",
        "Ranking averages valid attempts within each active case, then weights every active "
        "case equally. An entry is ranked only when it covers every active case.",
        class_="muted",
    )
    return section("Leaderboard", table(headers, rows, "leaderboard"), note)


def _bar(i: int, name: str, score: float) -> Html:
    clamped = min(1.0, max(0.0, score)) if score == score else 0.0
    y = i * CHART_ROW_H
    width = round(clamped * CHART_BAR_W, 1)
    return join(
        [
            tag("text", name, x="0", y=str(y + 16)),
            tag(
                "rect",
                "",
                class_="bar",
                x=str(CHART_LABEL_W),
                y=str(y + 4),
                width=num(width, 1),
                height=str(CHART_ROW_H - 8),
            ),
            tag("text", num(score), x=num(CHART_LABEL_W + width + 6, 1), y=str(y + 16)),
        ],
        "",
    )


def _chart(entries: list[EntryResult]) -> Html:
    scored = [(e.entry, e.score) for e in entries if e.score is not None]
    if not scored:
        return section("Scores", tag("p", "No entry has a score.", class_="muted"))
    width = CHART_LABEL_W + CHART_BAR_W + 60
    height = len(scored) * CHART_ROW_H
    bars = join(_bar(i, name, score) for i, (name, score) in enumerate(scored))
    svg = tag(
        "svg",
        bars,
        xmlns="http://www.w3.org/2000/svg",
        class_="chart",
        role="img",
        width=str(width),
        height=str(height),
        viewBox=f"0 0 {width} {height}",
        aria_label="entry scores, 0 to 1",
    )
    return section("Scores", svg)


def _per_case(result: ReleaseResult, entries: list[EntryResult]) -> Html:
    rows = []
    for entry in entries:
        by_case = {c.case: c for c in entry.cases}
        row: list[str | None] = [entry.entry]
        for case in result.active_cases:
            score = by_case.get(case)
            if score is None:
                row.append(None)
            else:
                total = sum(score.attempts.values())
                row.append(f"{num(score.mean)} ({score.valid}/{total} valid)")
        rows.append(row)
    return section("Per-case scores", table(["entry", *result.active_cases], rows, "cases"))


def _reliability(result: ReleaseResult) -> Html:
    rel = result.reliability
    rows = [(outcome, count) for outcome, count in sorted(rel.by_outcome.items())]
    rate = f"{rel.harness_failure_rate * 100:.1f}%"
    summary = tag(
        "p",
        f"{rel.attempts} attempts; harness failure rate {rate}. "
        "Harness failures are excluded from scores and retried.",
        class_="muted",
    )
    return section("Reliability", summary, table(["outcome", "attempts"], rows, "reliability"))


def _attempts(result: ReleaseResult) -> Html:
    ordered = sorted(result.attempts, key=lambda a: (a.entry, a.case, a.index, a.id))
    rows = [
        (link(f"runs/{a.id}.html", a.id), a.entry, a.case, a.index, a.outcome, num(a.total))
        for a in ordered
    ]
    headers = ["attempt", "entry", "case", "index", "outcome", "total"]
    return section("Attempts", table(headers, rows, "attempts"))


def index_page(result: ReleaseResult) -> bytes:
    entries = sorted(result.entries, key=_order)
    meta = tag(
        "p",
        f"release {result.release} · protocol {result.protocol} · "
        f"aggregation {result.aggregation} · {len(result.active_cases)} active cases",
        class_="muted",
    )
    body = join(
        [
            tag("h1", result.title),
            meta,
            _banner(result),
            _leaderboard(result, entries),
            _chart(entries),
            _per_case(result, entries),
            _reliability(result),
            _attempts(result),
        ]
    )
    return document(result.title, body, "")
