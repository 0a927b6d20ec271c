"""index.html: banner, leaderboard (with intervals and tie bands), score chart, per-case
scores, reliability, withdrawals, attempts."""

from __future__ import annotations

from recon.model.result import EntryResult, Interval, ReleaseResult, Reliability
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


def _interval(ci: Interval | None) -> str | None:
    return None if ci is None else f"{num(ci[0])}–{num(ci[1])}"


def _band(entry: EntryResult) -> str | None:
    if entry.band is None:
        return None
    first, last = entry.band
    return str(first) if first == last else f"{first}–{last} (tied)"


def _leaderboard(result: ReleaseResult, entries: list[EntryResult]) -> Html:
    active = len(result.active_cases)
    rows = [
        (
            e.rank,
            _band(e),
            e.entry,
            e.model,
            e.agent,
            num(e.score),
            num(e.se),
            _interval(e.ci),
            f"{e.covered}/{active}",
            _status(e, active),
        )
        for e in entries
    ]
    headers = ["rank", "band", "entry", "model", "agent", "score", "s.e.", "95% interval"]
    headers += ["covered cases", "status"]
    boot = result.uncertainty
    how = (
        f" Intervals: percentile bootstrap of {boot.resamples} resamples (cases, then repeats "
        f"within each case), seed {boot.seed}."
        if boot is not None
        else ""
    )
    note = tag(
        "p",
        "Ranking averages valid attempts within each active case, then weights every active "
        "case equally. An entry is ranked only when it covers every active case. Entries whose "
        "neighbouring intervals overlap share a band: they are statistically tied." + how,
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
                shown = (
                    f"{num(score.mean)} [{_interval(score.ci)}]" if score.ci else num(score.mean)
                )
                row.append(f"{shown} ({score.valid}/{total} valid)")
        rows.append(row)
    return section("Per-case scores", table(["entry", *result.active_cases], rows, "cases"))


def _rate(value: float | None) -> str | None:
    return None if value is None else f"{value * 100:.1f}%"


def _reliability_row(name: str, rel: Reliability) -> list[str | int | None]:
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(rel.by_outcome.items()))
    return [name, rel.attempts, outcomes or None, rel.tries, rel.retries,
            _rate(rel.harness_failure_rate), rel.withdrawn]  # fmt: skip


def _reliability(result: ReleaseResult) -> Html:
    rel = result.reliability
    rows = [_reliability_row("release", rel.overall)]
    rows += [_reliability_row(f"entry {e}", r) for e, r in sorted(rel.entries.items())]
    rows += [_reliability_row(f"case {c}", r) for c, r in sorted(rel.cases.items())]
    headers = ["scope", "attempts", "by outcome", "tries", "retries", "harness failure rate"]
    summary = tag(
        "p",
        "Harness failures are excluded from scores and retried; the rate is over every try. "
        "Withdrawn attempts are in no count but their own.",
        class_="muted",
    )
    return section("Reliability", summary, table([*headers, "withdrawn"], rows, "reliability"))


def _withdrawals(result: ReleaseResult) -> Html:
    if not result.withdrawals:
        return section("Withdrawals", tag("p", "No attempt is withdrawn.", class_="muted"))
    rows = [
        (
            w.attempt,
            "automatic" if w.automatic else f"by {w.by}" + (f" at {w.at}" if w.at else ""),
            w.reason,
            w.recorded_outcome,
            "; ".join(f"{k} {a}→{b}" for k, (a, b) in w.effect.items()) or "none (not applied)",
        )
        for w in result.withdrawals
    ]
    headers = ["attempt", "withdrawn", "reason", "recorded outcome", "denominators"]
    return section("Withdrawals", table(headers, rows, "withdrawals"))


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
            _withdrawals(result),
            _attempts(result),
        ]
    )
    return document(result.title, body, "")
