"""The Jinja2 environment of the site: autoescaped templates, fixed-format numbers.

Templates live in ``recon/site/templates/`` (package data, so a template edit re-keys the
site cell). Autoescaping is on for every template and ``StrictUndefined`` makes a missing
value an error instead of an empty string. Numbers reach a page only through the filters
below, each with one fixed format:

- ``score``: a value in [0, 1] with 4 decimals (``0.6561``, ``1.0000``), ``—`` for none;
- ``delta``: a signed change of a score (``+0.0011``, ``−0.3122``);
- ``interval``: ``low–high`` of two scores;
- ``pct``: a rate as a percentage with 1 decimal (``25.0%``);
- ``count``: a whole number with thousands separators (``45,000``);
- ``seconds``: a duration with 2 decimals and ``s``;
- ``fixed(n)``: any other quantity with ``n`` decimals (CPUs);
- ``px``: an SVG coordinate with 1 decimal;
- ``short``: the first 12 characters of a digest;
- ``usd``: US dollars with 6 decimals (``$0.001234``), ``—`` for none (no price).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

DASH = "—"
SCORE_PLACES = 4
SHORT = 12
TEMPLATES = "templates"


def score(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return DASH
    return f"{value:.{SCORE_PLACES}f}"


def delta(value: float | None) -> str:
    """A signed change of a score: ``+0.0011``, ``−0.3122``."""
    if value is None or not math.isfinite(value):
        return DASH
    return f"{value:+.{SCORE_PLACES}f}".replace("-", "−")


def interval(ci: tuple[float, float] | list[float] | None) -> str:
    if ci is None:
        return DASH
    return f"{score(ci[0])}–{score(ci[1])}"


def pct(value: float | None) -> str:
    return DASH if value is None else f"{value * 100:.1f}%"


def count(value: int | float | None) -> str:
    return DASH if value is None else f"{int(value):,}"


def seconds(value: float | None) -> str:
    return DASH if value is None else f"{value:.2f} s"


def fixed(value: float | None, places: int = 2) -> str:
    return DASH if value is None else f"{value:.{places}f}"


def dimension(name: str) -> str:
    """A dimension's name as prose: ``global_visual`` -> ``global visual``."""
    return name.replace("_", " ")


def px(value: float) -> str:
    return f"{value:.1f}"


def short(digest: str | None) -> str:
    return DASH if digest is None else digest[:SHORT]


def usd(value: float | None) -> str:
    return DASH if value is None or not math.isfinite(value) else f"${value:.6f}"


FILTERS = {
    "score": score,
    "interval": interval,
    "delta": delta,
    "pct": pct,
    "count": count,
    "seconds": seconds,
    "px": px,
    "fixed": fixed,
    "dimension": dimension,
    "short": short,
    "usd": usd,
}


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("recon.site", TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(FILTERS)
    return env


def page(template: str, context: Mapping[str, Any]) -> bytes:
    """One page rendered from ``template`` with ``context`` (plain data only)."""
    return environment().get_template(template).render(**context).encode("utf-8")


def asset(name: str) -> bytes:
    """A static file of the templates folder (the stylesheet, the script), verbatim."""
    loader = environment().loader
    assert loader is not None
    source, _, _ = loader.get_source(environment(), name)
    return source.encode("utf-8")
