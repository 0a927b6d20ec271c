"""The hand-checked fixture of DESIGN §7: every outcome class, two entries (one partial),
every number of the release written out by hand, and the bootstrap against a numpy
reference computed here from the same seed."""

from __future__ import annotations

import math

import blake3
import numpy as np
import pytest

from recon.model import Active, Sidecar
from recon.release.aggregate import Aggregated, aggregate
from recon.release.uncertainty import tie_bands
from recon.store import digest_json
from tests.release.factories import attempt, conditions, d, entry, release

SEED, RESAMPLES = 7, 1000
EXACT = 1e-12


def build() -> Aggregated:
    """Entry a covers both cases; entry b has no valid attempt on x (partial).

    a.x: 0.8 valid; 0.6 valid on its second try (the first failed in the harness);
         0.1 valid but withdrawn by hand.
    a.y: 0.5 valid; timeout; 0.3 valid.
    b.x: missing; ungradeable; harness failure, final after two retries (three tries).
    b.y: 0.9 valid; 0.7 valid but run on another image (withdrawn automatically); 0.2 valid.
    A manual withdrawal of b.x.0 names an older record: it is listed and changes nothing.
    """
    attempts = [
        attempt("a", "x", 0, "valid", 0.8),
        attempt("a", "x", 1, "valid", 0.6, try_index=1, retry_of=d("failed-try")),
        attempt("a", "x", 2, "valid", 0.1),
        attempt("a", "y", 0, "valid", 0.5),
        attempt("a", "y", 1, "timeout", None),
        attempt("a", "y", 2, "valid", 0.3),
        attempt("b", "x", 0, "missing", None),
        attempt("b", "x", 1, "ungradeable", None),
        attempt("b", "x", 2, "harness_failure", None, try_index=2, retry_of=d("second")),
        attempt("b", "y", 0, "valid", 0.9),
        attempt("b", "y", 1, "valid", 0.7, image=d("another image")),
        attempt("b", "y", 2, "valid", 0.2),
    ]
    withdrawals = [
        Active(
            attempt="p.a.x.2",
            record=d("record-p.a.x.2"),
            sidecar=d("sidecar-1"),
            reason="ran with the wrong brief",
            by="maintainer",
            at="2025-01-02T03:04:05+00:00",
        ),
        Active(
            attempt="p.b.x.0",
            record=d("an older record"),
            sidecar=d("sidecar-2"),
            reason="stale",
            by="maintainer",
            at="2025-01-01T00:00:00+00:00",
        ),
    ]
    definition = release(["a", "b"], ["x", "y"], repeats=3, seed=SEED, resamples=RESAMPLES)
    entries = {e: entry(e) for e in ("a", "b")}
    return aggregate(definition, entries, attempts, conditions(["a", "b"]), withdrawals)


def approx(value: float) -> object:
    return pytest.approx(value, abs=EXACT)


def test_scores_standard_errors_coverage_and_ranks_by_hand() -> None:
    result = build().result
    a, b = result.entries
    assert (a.entry, a.rank, a.ranked, a.covered, a.band) == ("a", 1, True, 2, (1, 1))
    assert (b.entry, b.rank, b.ranked, b.covered, b.band) == ("b", None, False, 1, None)
    ax, ay = a.cases
    assert ax.mean == approx(0.7) and ax.se == approx(0.1)  # (0.8 + 0.6) / 2; sd 0.1414 / √2
    assert ax.valid == 2 and ax.attempts == {"valid": 2, "withdrawn": 1}
    assert ax.per_attempt == [0.8, 0.6, None]
    assert ay.mean == approx(0.4) and ay.se == approx(0.1)
    assert ay.attempts == {"timeout": 1, "valid": 2}
    assert a.score == approx(0.55)  # (0.7 + 0.4) / 2
    assert a.se == approx(0.15)  # sd of (0.7, 0.4) = 0.2121, over √2
    bx, by = b.cases
    assert bx.mean is None and bx.se is None and bx.ci is None and bx.valid == 0
    assert bx.attempts == {"harness_failure": 1, "missing": 1, "ungradeable": 1}
    assert by.mean == approx(0.55) and by.se == approx(0.35)  # (0.9 + 0.2) / 2; sd 0.495 / √2
    assert by.attempts == {"valid": 2, "withdrawn": 1}
    assert b.score is None and b.se is None and b.ci is None and b.dimensions == {}
    # per-dimension means: functional is the total here, regional visual 1 - total
    assert a.dimensions["functional"].mean == approx(0.55)
    assert a.dimensions["functional"].se == approx(0.15)
    assert a.dimensions["regional_visual"].mean == approx(0.45)  # (0.3 + 0.6) / 2
    assert a.dimensions["regional_visual"].se == approx(0.15)
    assert a.record is not None and a.record.digest == d("entry-a")


def test_reliability_counts_every_try_by_hand() -> None:
    rel = build().result.reliability
    overall = rel.overall
    assert overall.attempts == 10 and overall.withdrawn == 2
    assert overall.by_outcome == {
        "harness_failure": 1,
        "missing": 1,
        "timeout": 1,
        "ungradeable": 1,
        "valid": 6,
    }
    assert overall.rates == {
        "harness_failure": 0.1,
        "missing": 0.1,
        "timeout": 0.1,
        "ungradeable": 0.1,
        "valid": 0.6,
    }
    # tries: 10 counted attempts, a.x.1 took 2 and b.x.2 took 3
    assert (overall.tries, overall.retries, overall.harness_failures) == (13, 3, 4)
    assert overall.harness_failure_rate == approx(4 / 13)
    a, b = rel.entries["a"], rel.entries["b"]
    assert (a.attempts, a.tries, a.retries, a.harness_failures, a.withdrawn) == (5, 6, 1, 1, 1)
    assert a.rates == {"timeout": 0.2, "valid": 0.8} and a.harness_failure_rate == approx(1 / 6)
    assert (b.attempts, b.tries, b.retries, b.harness_failures, b.withdrawn) == (5, 7, 2, 3, 1)
    assert b.harness_failure_rate == approx(3 / 7)
    assert b.by_outcome == {"harness_failure": 1, "missing": 1, "ungradeable": 1, "valid": 2}
    x, y = rel.cases["x"], rel.cases["y"]
    assert (x.attempts, x.tries, x.retries, x.harness_failures, x.withdrawn) == (5, 8, 3, 4, 1)
    assert x.harness_failure_rate == 0.5
    assert (y.attempts, y.tries, y.retries, y.harness_failures, y.withdrawn) == (5, 5, 0, 0, 1)
    assert y.harness_failure_rate == 0.0 and y.rates == {"timeout": 0.2, "valid": 0.8}


def test_withdrawals_are_listed_with_their_effect_on_every_denominator() -> None:
    built = build()
    listed = {(w.attempt, w.automatic): w for w in built.result.withdrawals}
    assert list(listed) == [("p.a.x.2", False), ("p.b.x.0", False), ("p.b.y.1", True)]
    manual = listed[("p.a.x.2", False)]
    assert manual.applies and manual.recorded_outcome == "valid" and manual.by == "maintainer"
    assert manual.effect == {
        "case_valid": (3, 2),
        "entry_covered": (2, 2),
        "entry_attempts": (6, 5),
        "case_attempts": (6, 5),
        "release_attempts": (11, 10),
    }
    stale = listed[("p.b.x.0", False)]
    assert not stale.applies and stale.effect == {} and stale.recorded_outcome == "missing"
    auto = listed[("p.b.y.1", True)]
    assert auto.applies and auto.by == "recon" and auto.at is None
    assert auto.reason.startswith("run conditions did not match the release: image digest ")
    assert auto.effect == {
        "case_valid": (3, 2),
        "entry_covered": (1, 1),
        "entry_attempts": (6, 5),
        "case_attempts": (6, 5),
        "release_attempts": (11, 10),
    }
    sidecar = built.sidecars["p.b.y.1"]
    assert isinstance(sidecar, Sidecar) and sidecar.automatic and sidecar.mismatch
    assert auto.sidecar == digest_json(sidecar.model_dump(mode="json"))
    summaries = {s.id: s for s in built.result.attempts}
    assert summaries["p.b.y.1"].outcome == "withdrawn" and summaries["p.b.y.1"].total is None
    assert summaries["p.a.x.1"].tries == 2 and summaries["p.a.x.1"].retry_of == d("failed-try")


def _rng(name: str) -> np.random.Generator:
    h = int.from_bytes(blake3.blake3(name.encode()).digest()[:8], "big")
    return np.random.default_rng([SEED, h])


def _reference_entry(cases: list[list[float]], rng: np.random.Generator) -> list[float]:
    """Resample cases, then the repeats of each drawn case, one resample at a time."""
    k, width = len(cases), max(len(c) for c in cases)
    picks = rng.integers(0, k, size=(RESAMPLES, k))
    uniforms = rng.random((RESAMPLES, k, width))
    stats = []
    for b in range(RESAMPLES):
        means = []
        for slot, case in enumerate(picks[b]):
            values = cases[case]
            n = len(values)
            drawn = [values[min(math.floor(u * n), n - 1)] for u in uniforms[b, slot, :n]]
            means.append(sum(drawn) / n)
        stats.append(sum(means) / k)
    return [float(v) for v in np.percentile(stats, [2.5, 97.5])]


def _reference_case(values: list[float], rng: np.random.Generator) -> list[float]:
    idx = rng.integers(0, len(values), size=(RESAMPLES, len(values)))
    stats = [sum(values[i] for i in row) / len(values) for row in idx]
    return [float(v) for v in np.percentile(stats, [2.5, 97.5])]


def test_bootstrap_intervals_equal_a_numpy_reference_from_the_same_seed() -> None:
    result = build().result
    assert result.uncertainty is not None
    assert (result.uncertainty.seed, result.uncertainty.resamples) == (SEED, RESAMPLES)
    a, b = result.entries
    assert a.ci is not None and list(a.ci) == approx(
        _reference_entry([[0.8, 0.6], [0.5, 0.3]], _rng("a"))
    )
    assert a.ci[0] < a.score < a.ci[1]  # type: ignore[operator]
    regional = [[1 - 0.8, 1 - 0.6], [1 - 0.5, 1 - 0.3]]
    assert list(a.dimensions["regional_visual"].ci) == approx(
        _reference_entry(regional, _rng("a/dimension:regional_visual"))
    )
    assert list(a.cases[0].ci or ()) == approx(_reference_case([0.8, 0.6], _rng("a/case:x")))
    assert list(b.cases[1].ci or ()) == approx(_reference_case([0.9, 0.2], _rng("b/case:y")))
    again = build().result
    assert again == result  # seeded: the same numbers every time


def test_adjacent_overlapping_intervals_share_a_rank_band() -> None:
    ranked = [
        (1, (0.7, 0.9)),
        (2, (0.6, 0.75)),
        (3, (0.5, 0.65)),
        (4, (0.1, 0.2)),
        (4, (0.15, 0.3)),
    ]
    assert tie_bands(ranked) == [(1, 3), (1, 3), (1, 3), (4, 4), (4, 4)]
    assert tie_bands([(1, (0.5, 0.6)), (2, (0.1, 0.2))]) == [(1, 1), (2, 2)]
    assert tie_bands([]) == []


def test_bootstrap_matches_the_reference_where_percentiles_interpolate() -> None:
    """Four cases of uneven repeat counts: the interval falls between resampled values, so
    only the same draws, in the same order, give the same numbers."""
    totals = {
        "c0": [0.91, 0.42, 0.77],
        "c1": [0.15, 0.33],
        "c2": [0.6, 0.58, 0.95, 0.2],
        "c3": [0.5],
    }
    attempts = [
        attempt("a", case, i, "valid", value)
        for case, values in totals.items()
        for i, value in enumerate(values)
    ]
    definition = release(["a"], list(totals), repeats=4, seed=SEED, resamples=RESAMPLES)
    result = aggregate(definition, {"a": entry("a")}, attempts, conditions(["a"])).result
    ci = result.entries[0].ci
    expected = _reference_entry(list(totals.values()), _rng("a"))
    assert ci is not None and list(ci) == approx(expected)
    values = sorted({round(sum(v) / len(v), 12) for v in totals.values()})
    assert not any(abs(ci[0] - v) < 1e-9 for v in values)  # an interpolated bound
    other = _reference_entry(list(totals.values()), np.random.default_rng([SEED + 1, 0]))
    assert list(ci) != approx(other)
    case = result.entries[0].cases[2]
    assert list(case.ci or ()) == approx(_reference_case(totals["c2"], _rng("a/case:c2")))
