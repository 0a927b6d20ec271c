"""The built demo publishes no sealed weight and no weight × value product (DESIGN §5.3).

Every case's weights are sealed; each published attempt shows its dimension values, their
public terms and the total. Were a weight or a product published, any weight would follow
(``product / value``). This scans everything the demo release publishes: ``release.json``,
``manifest.json`` and every page, script and data file of the site.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from recon.model import PUBLIC_TERMS, Grading, load_yaml
from tests.conftest import Build
from tests.site.leaks import published_numbers

SEALED_WORDS = re.compile(r"product|arithmetic|weight_sum|weighted_sum|penalty", re.IGNORECASE)
NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+(?:e[-+]?\d+)?")


def _keys(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield str(key)
            yield from _keys(value)
    elif isinstance(node, list):
        for value in node:
            yield from _keys(value)


def _numbers(node: Any) -> Iterator[float]:
    if isinstance(node, bool):
        return
    if isinstance(node, int | float):
        yield float(node)
    elif isinstance(node, dict):
        for value in node.values():
            yield from _numbers(value)
    elif isinstance(node, list):
        for value in node:
            yield from _numbers(value)


def _sealed(project: Path, release: dict[str, Any]) -> set[float]:
    """Every sealed weight of the demo's cases and every weight × value product of its
    attempts, except 0 and whole numbers (counts print those legitimately), the 0.5 of
    a few check weights (a dimension value can be 0.5), and any equal to a published
    dimension value, total or entry statistic (``published_numbers``: a starter's
    responsive 0.2 is the functional weight of html5-boilerplate: printing the value
    cannot be told from printing the weight)."""
    numbers: set[float] = set()
    gradings = {
        case: load_yaml(Grading, project / "cases" / case / "sealed" / "grading.yaml")
        for case in release["active_cases"]
    }
    for grading in gradings.values():
        numbers |= set(grading.weights.values())
        numbers |= {r.weight for r in grading.regions} | {w.weight for w in grading.workflows}
        numbers |= {a.weight for a in grading.assertions}
        numbers.add(sum(r.weight for r in grading.regions))
        numbers.add(sum(a.weight for a in grading.assertions))
    for attempt in release["attempts"]:
        weights = gradings[attempt["case"]].weights
        for name, dim in attempt["dimensions"].items():
            numbers.add(weights[name] * dim["value"])
    public = published_numbers(release)
    return {
        x
        for x in numbers
        if not float(x).is_integer() and x != 0.5 and all(abs(x - v) > 1e-9 for v in public)
    }


def test_no_run_page_or_json_holds_a_weight_or_a_product(built_demo: tuple[Path, Build]) -> None:
    project, _ = built_demo
    out = project / "releases" / "demo"
    release = json.loads((out / "release.json").read_text())
    sealed = _sealed(project, release)
    assert {0.35, 0.15, 0.25, 0.1} <= sealed  # the scan looks for the real weights
    valid = [a for a in release["attempts"] if a["outcome"] == "valid"]
    assert valid and all(len(a["dimensions"]) == 7 for a in valid)
    for attempt in valid:  # values and allow-listed terms only
        for name, dim in attempt["dimensions"].items():
            assert set(dim) == {"value", "terms"} and set(dim["terms"]) <= PUBLIC_TERMS[name]
    public = {f"{v:.{p}f}" for v in published_numbers(release) for p in (3, 4)}
    published = {
        path: path.read_text(encoding="utf-8")
        for path in [out / "release.json", out / "manifest.json", *(out / "site").rglob("*")]
        if path.suffix in (".json", ".html", ".css", ".js")
    }
    # every page (runs, entries, cases, index, reliability, manifest) and the export's data
    pages = len(release["attempts"]) + len(release["entries"]) + len(release["active_cases"]) + 3
    assert len([p for p in published if p.suffix == ".html"]) == pages
    assert out / "site" / "data" / "manifest.js" in published
    for path, text in published.items():
        where = path.relative_to(out)
        assert not SEALED_WORDS.search(text), f"{where}: {SEALED_WORDS.search(text)}"
        if path.suffix == ".json":
            data = json.loads(text)
            assert not [k for k in _keys(data) if "weight" in k.lower()], where
            leaked = sorted({x for x in _numbers(data) if any(abs(x - s) < 1e-12 for s in sealed)})
        else:
            shown = set(NUMBER.findall(text)) - public  # a public statistic may print alike
            leaked = sorted(
                {f"{s:.{p}f}" for s in sealed for p in (3, 4)} & shown, key=float
            )  # pages print values with 4 places, the old run page 3
        assert not leaked, f"{where}: sealed numbers {leaked}"
