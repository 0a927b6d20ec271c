"""The leak scan of an exported site: nothing sealed may appear anywhere in it (issue 14).

What counts as sealed, for the release's cases:

- **files**: every 32-byte window of every file under ``sealed/`` (the reference and the
  grading), except windows inside a public label (labels are written for the run page);
- **strings**: every selector, locator string, expected value and step value of the
  grading (at least 4 characters), unless the case's public package (brief, contract)
  states it too;
- **numbers**: every weight, threshold and policy number, and every weight × value product
  of the release's attempts (but not one equal to a published dimension value or total,
  which a page must print), rounded to 3 or 4 decimals (or 2 when exact; whole numbers
  below 100 and 0.5 cannot be told from counts and values, and are left out); whole
  thresholds from 100 up (byte caps) as written and with thousands separators;
- **digests**: the output digests of the oracle cells and of the reference's probe cells,
  and the digest of every file in them, whole or as a 12-character short form.

Every file of the tree is scanned as bytes and, for HTML, also after decoding entities.
Left out of the scan: the standard HTML5 document skeleton every page carries
(:data:`SKELETON`: doctype, ``<html lang>``, charset and the mobile viewport tag, which one
demo case's sealed check expects verbatim and which every responsive page must have), the
SVG namespace declaration of a standalone ``.svg``, and
the digest of an empty tree (the same for every empty output).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from recon.model import Grading, Manifest, load_yaml
from recon.model.grading import Checkpoint, Step
from recon.store import Store, tree_files

WINDOW = 32
MIN_STRING = 4
SHORT = 12
TEXT = (".html", ".js", ".css", ".json", ".txt", ".md")
_P = np.uint64(0x100000001B3)
SKELETON = (
    b'<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
    b'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
)
SVG_NAMESPACE = b' xmlns="http://www.w3.org/2000/svg"'
"""The W3C constant every standalone SVG declares (the site's favicon, a sealed icon)."""


@dataclass
class Sealed:
    """What must not appear, each with where it comes from."""

    windows: dict[int, list[tuple[bytes, str]]] = field(default_factory=dict)  # hash -> windows
    strings: dict[str, str] = field(default_factory=dict)  # casefolded -> where
    numbers: dict[str, str] = field(default_factory=dict)  # token -> where
    digests: dict[str, str] = field(default_factory=dict)  # hex -> where


def _hashes(data: bytes) -> np.ndarray:
    """A polynomial hash of every 32-byte window (uint64, wrapping)."""
    a = np.frombuffer(data, dtype=np.uint8).astype(np.uint64)
    n = len(a) - WINDOW + 1
    if n <= 0:
        return np.zeros(0, dtype=np.uint64)
    h = np.zeros(n, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(WINDOW):
            h = h * _P + a[j : j + n]
    return h


def _public_spans(data: bytes, labels: list[str]) -> list[tuple[int, int]]:
    spans = []
    for label in labels:
        needle = label.encode("utf-8")
        spans += [(m.start(), m.end()) for m in re.finditer(re.escape(needle), data)]
    return spans


def _add_windows(sealed: Sealed, data: bytes, where: str, public: list[tuple[int, int]]) -> None:
    hashes = _hashes(data)
    masked = np.zeros(len(hashes), dtype=bool)
    for start, end in public:  # a window overlapping a public label is not a secret
        masked[max(0, start - WINDOW + 1) : end] = True
    for i in np.flatnonzero(~masked):
        window = data[i : i + WINDOW]
        if len(set(window)) < 4:  # padding runs (zeros, spaces) are in every binary
            continue
        sealed.windows.setdefault(int(hashes[i]), []).append((window, f"{where}@{i}"))


def _labels(grading: Grading) -> list[str]:
    found = [a.label for a in [*grading.assertions, *grading.preservation.assertions]]
    for wf in grading.workflows:
        found.append(wf.label)
        found += [s.label for s in wf.steps if isinstance(s, Checkpoint)]
        found += [a.label for s in wf.steps if isinstance(s, Checkpoint) for a in s.assertions]
    return [x for x in found if x]


def _strings(grading: Grading) -> Iterator[tuple[str, str]]:
    for r in grading.regions:
        if r.selector:
            yield r.selector, f"regions.{r.id}.selector"
    checks = [*grading.assertions, *grading.preservation.assertions]
    for wf in grading.workflows:
        for step in wf.steps:
            if isinstance(step, Step):
                yield from ((str(s), f"workflows.{wf.id} step") for s in step.secrets() if s)
            else:
                checks += step.assertions
    for a in checks:
        yield from ((str(s), f"assertions.{a.id}") for s in a.secrets() if isinstance(s, str))


def _numbers(grading: Grading, products: list[float]) -> Iterator[tuple[float, str]]:
    yield from ((w, f"weights.{k}") for k, w in grading.weights.items())
    yield from ((r.weight, f"regions.{r.id}.weight") for r in grading.regions)
    yield from ((a.weight, f"assertions.{a.id}.weight") for a in grading.assertions)
    yield from ((w.weight, f"workflows.{w.id}.weight") for w in grading.workflows)
    yield sum(r.weight for r in grading.regions), "regions weight sum"
    yield sum(a.weight for a in grading.assertions), "assertions weight sum"
    for name, value in grading.thresholds.model_dump().items():
        yield float(value), f"thresholds.{name}"
    policy = grading.policy
    for name in ("max_asset_bytes", "max_total_bytes", "evidence_hash_distance"):
        yield float(getattr(policy, name)), f"policy.{name}"
    yield policy.default_penalty, "policy.default_penalty"
    yield from ((v, f"policy.penalty.{k}") for k, v in policy.penalty.items())
    yield from ((p, "weight × value product") for p in products)


def _published_values(result: dict[str, Any]) -> set[str]:
    """The tokens of every number :func:`published_numbers` gives: a sealed number that
    equals one of them cannot be told from it on a page."""
    return {token for value in published_numbers(result) for token in _tokens(float(value))}


def published_numbers(result: dict[str, Any]) -> list[float]:
    """Every dimension value and total the release publishes, and the entries' statistics
    of them (score, standard error and interval, per case and per dimension): each is
    computed from published values alone (a workflow's standard error over two cases, 1.0
    and 0.9915, is 0.0043, which a weight × value product of the demo can equal)."""
    values = [a["total"] for a in result["attempts"] if a.get("total") is not None]
    values += [dim["value"] for a in result["attempts"] for dim in a["dimensions"].values()]
    for entry in result["entries"]:
        parts = [entry, *entry["cases"], *entry["dimensions"].values()]
        for part in parts:
            values += [part[k] for k in ("score", "mean", "se") if part.get(k) is not None]
            values += [*(part.get("ci") or []), *part.get("per_attempt", [])]
    return [float(v) for v in values if v is not None]


def _tokens(value: float) -> list[str]:
    """How a page would print ``value``: rounded to 3 or 4 decimals, or to 2 when that is
    exact; a whole number from 100 up as is and with thousands separators."""
    if float(value).is_integer():
        return [f"{int(value)}", f"{int(value):,}"] if value >= 100 else []
    if value == 0.5:
        return []
    places = (2, 3, 4) if round(value, 2) == value else (3, 4)
    return sorted({f"{value:.{p}f}" for p in places})


def _digests(store: Store, manifest: Manifest) -> Iterator[tuple[str, str]]:
    for cell in manifest.cells:
        reference = cell.kind == "probe" and cell.name.endswith(".reference")
        if cell.kind != "oracle" and not reference:
            continue
        for slot, ref in cell.outputs.items():
            files = tree_files(store, ref.digest) if ref.type == "tree" else {}
            if ref.type == "tree" and not files:
                continue  # the empty tree: every empty output has its digest
            yield ref.digest, f"{cell.kind}:{cell.name} {slot}"
            yield from ((f.digest, f"{cell.kind}:{cell.name} {slot}/{p}") for p, f in files.items())


def sealed_material(project: Path, release: str = "demo") -> Sealed:
    """Everything sealed of a built release of ``project``."""
    out = project / "releases" / release
    result = json.loads((out / "release.json").read_text())
    manifest = Manifest.model_validate_json((out / "manifest.json").read_text())
    sealed = Sealed()
    for case in result["active_cases"]:
        folder = project / "cases" / case
        grading = load_yaml(Grading, folder / "sealed" / "grading.yaml")
        public = " ".join(
            (folder / "public" / name).read_text().casefold()
            for name in ("brief.md", "contract.yaml")
        )
        for path in sorted((folder / "sealed").rglob("*")):
            if path.is_file():
                data = path.read_bytes()
                _add_windows(sealed, data, str(path.relative_to(project)),
                             _public_spans(data, _labels(grading)))  # fmt: skip
        for text, where in _strings(grading):
            folded = " ".join(text.casefold().split())
            if len(folded) >= MIN_STRING and folded not in " ".join(public.split()):
                sealed.strings[folded] = f"{case} {where}"
        products = [
            grading.weights[name] * dim["value"]
            for a in result["attempts"]
            if a["case"] == case
            for name, dim in a["dimensions"].items()
        ]
        for value, where in _numbers(grading, products):
            for token in _tokens(value):
                sealed.numbers.setdefault(token, f"{case} {where}")
    for token in _published_values(result):  # a weight equal to a public value is not told
        sealed.numbers.pop(token, None)
    for digest, where in _digests(Store(project / "store"), manifest):
        sealed.digests[digest] = where
        sealed.digests[digest[:SHORT]] = where
    return sealed


def _texts(path: Path, data: bytes) -> list[bytes]:
    """The forms of a file to scan: its bytes, and for a page, its text with entities
    decoded; a page's standard skeleton and an SVG's namespace are cut out of both."""
    if path.suffix == ".svg":
        return [data.replace(SVG_NAMESPACE, b"", 1)]
    if path.suffix != ".html":
        return [data]
    data = data.replace(SKELETON, b"", 1)
    return [data, html.unescape(data.decode("utf-8", errors="replace")).encode("utf-8")]


def _window_hits(data: bytes, sealed: Sealed) -> Iterator[str]:
    keys = np.fromiter(sealed.windows.keys(), dtype=np.uint64, count=len(sealed.windows))
    hashes = _hashes(data)
    for i in np.flatnonzero(np.isin(hashes, keys)):
        for window, where in sealed.windows[int(hashes[i])]:
            if data[i : i + WINDOW] == window:
                yield f"32 bytes of {where}: {window!r}"


NUMBER = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?(?![\w.]|,\d)")
HEX = re.compile(r"[0-9a-f]{12,64}")


def scan(tree: Path, sealed: Sealed) -> list[str]:
    """Every sealed thing found in the files under ``tree``, as ``path: what (where)``."""
    found: list[str] = []
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        rel = path.relative_to(tree).as_posix()
        data = path.read_bytes()
        hits: set[str] = set()
        for form in _texts(path, data):
            hits.update(_window_hits(form, sealed))
            if path.suffix not in TEXT:
                continue
            text = form.decode("utf-8", errors="replace")
            folded = " ".join(text.casefold().split())
            hits.update(f"{s!r} ({w})" for s, w in sealed.strings.items() if s in folded)
            hits.update(f"number {t} ({sealed.numbers[t]})" for t in NUMBER.findall(text)
                        if t in sealed.numbers)  # fmt: skip
            for run in HEX.findall(text):
                hits.update(f"digest {d} ({w})" for d, w in sealed.digests.items() if d in run)
        found += [f"{rel}: {hit}" for hit in sorted(hits)]
    return found


def describe(sealed: Sealed) -> dict[str, Any]:
    return {
        "windows": sum(len(v) for v in sealed.windows.values()),
        "strings": len(sealed.strings),
        "numbers": len(sealed.numbers),
        "digests": len(sealed.digests),
    }
