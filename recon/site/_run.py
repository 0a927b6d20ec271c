"""runs/<attempt id>.html: outcome, trace, dimension values with their public terms and the
total, evidence next to captures. No weight and no weighted product (DESIGN §5.3)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from recon.model.result import AttemptSummary, ReleaseResult
from recon.site._html import Cell, Html, document, esc, join, link, num, section, table, tag

AddImage = Callable[[bytes, str], str]


def _stem(name: str) -> str:
    return name.rsplit("/", 1)[-1][: -len(".png")]


def _match(point: str, names: list[str]) -> str | None:
    """The evidence file for a matrix point ``<route>.<viewport>.<state>``: the same stem,
    else ``<viewport>--<state>.png`` (``recon curate evidence``'s state stills), else, for
    the default state of route ``/`` only, ``<viewport>.png``. A state never borrows the
    default still, nor another route the root's."""
    route, viewport, state = ["", "", "", *point.rsplit(".", 2)][-3:]
    wanted = [point, f"{viewport}--{state}"]
    if state == "default":
        wanted = [point, viewport] if route == "root" else [point]
    by_stem = {_stem(name): name for name in names}
    return next((by_stem[stem] for stem in wanted if stem in by_stem), None)


Pair = tuple[str | None, str | None]


def pairs(evidence: Mapping[str, bytes], points: Mapping[str, bytes]) -> list[Pair]:
    """(evidence name, capture point) rows: captures with their evidence, then the rest."""
    names = sorted(n for n in evidence if n.lower().endswith(".png"))
    rows: list[Pair] = []
    used: set[str] = set()
    for point in sorted(points):
        name = _match(point, names)
        if name is not None:
            used.add(name)
        rows.append((name, point))
    rows.extend((name, None) for name in names if name not in used)
    return rows


def _figure(src: str | None, caption: str) -> Html:
    if src is None:
        return tag("figure", tag("figcaption", caption))
    image = tag("a", Html(f'<img src="{esc(src)}" alt="{esc(caption)}" loading="lazy">'), href=src)
    return tag("figure", join([image, tag("figcaption", caption)]))


def _screenshots(
    attempt: AttemptSummary,
    evidence: Mapping[str, bytes],
    points: Mapping[str, bytes],
    add: AddImage,
) -> Html:
    rows = pairs(evidence, points)
    if not rows:
        return section("Screenshots", tag("p", "No evidence or captures.", class_="muted"))
    parts: list[Html] = [Html('<div class="pairs">')]
    for name, point in rows:
        title = point if point is not None else f"{name} (no capture)"
        parts.append(tag("h3", title))
        if name is None:
            parts.append(_figure(None, "no evidence screenshot for this point"))
        else:
            src = "../" + add(evidence[name], f"evidence {attempt.case}/{name}")
            parts.append(_figure(src, f"evidence: {name}"))
        if point is None:
            parts.append(_figure(None, "no Candidate capture"))
        else:
            src = "../" + add(points[point], f"capture {attempt.id}/{point}")
            parts.append(_figure(src, f"Candidate: {point}"))
    parts.append(Html("</div>"))
    note = tag("p", "Left: public evidence. Right: the Candidate's render.", class_="muted")
    return section("Screenshots", note, join(parts))


def _facts(result: ReleaseResult, attempt: AttemptSummary) -> Html:
    rows: list[tuple[str, Cell]] = [
        ("entry", attempt.entry),
        ("case", attempt.case),
        ("index", attempt.index),
        ("outcome", attempt.outcome),
        ("reason", attempt.reason),
        ("formal", "yes" if attempt.formal else "no"),
        ("total", num(attempt.total)),
        ("tries", attempt.tries),
        ("release", result.release),
        ("record", tag("code", attempt.record)),
    ]
    return section("Outcome", table(["field", "value"], rows, "facts"))


def _trace(attempt: AttemptSummary) -> Html:
    t, e = attempt.trace, attempt.egress
    rows = [("turns", t.turns), ("tool calls", t.tool_calls), ("tokens", t.tokens)]
    rows += [("egress allowed", e.allowed), ("egress refused", e.refused)]
    rows += [("egress failed", e.failed)]
    return section("Trace", table(["count", "value"], rows, "trace"))


def _terms(terms: Mapping[str, float]) -> str:
    return ", ".join(f"{name} {num(value)}" for name, value in sorted(terms.items()))


def _dimensions(attempt: AttemptSummary) -> Html:
    """Each dimension's value and public terms, then the total. The case's weights are
    sealed: the page says that the total combines the values, not how."""
    if not attempt.dimensions:
        return section("Dimensions", tag("p", "No dimension scores.", class_="muted"))
    rows: list[list[Cell]] = [
        [name, num(dim.value), _terms(dim.terms) or None]
        for name, dim in sorted(attempt.dimensions.items())
    ]
    rows.append([tag("strong", "total"), tag("strong", num(attempt.total)), None])
    note = tag(
        "p",
        "Each value is in [0, 1]. The total combines them with the case's sealed weights.",
        class_="muted",
    )
    return section("Dimensions", note, table(["dimension", "value", "terms"], rows, "dimensions"))


def run_page(
    result: ReleaseResult,
    attempt: AttemptSummary,
    evidence: Mapping[str, bytes],
    points: Mapping[str, bytes],
    add: AddImage,
) -> bytes:
    crumbs = tag("p", join([link("../index.html", result.title), attempt.id], " › "))
    body = join(
        [
            crumbs,
            tag("h1", f"Run {attempt.id}"),
            _facts(result, attempt),
            _trace(attempt),
            _dimensions(attempt),
            _screenshots(attempt, evidence, points, add),
        ]
    )
    return document(f"{attempt.id} — {result.title}", body, "../")
