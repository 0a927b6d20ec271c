"""The text report of a fitted calibration, as `recon calibrate fit` prints it."""

from __future__ import annotations

from recon.model import Calibration
from recon.model.calibration import FitReport, ThresholdReport, VisualFit


def report(c: Calibration, where: str) -> str:
    lines = [] if c.report is None else _dimensions(c, c.report)
    lines += [] if c.visual is None else visual_lines(c.visual)
    lines.append(f"wrote {where} (sealed: name it in a release as `calibration: {c.id}`)")
    return "\n".join(lines) + "\n"


def visual_lines(v: VisualFit) -> list[str]:
    """Global visual's fit: per path its agreement before and after, and the weights."""
    lines = [
        f"global visual on {v.pairs} consensus pair(s) of a study ({len(v.study)} file(s)), "
        f"rendered at {v.viewport}; {v.method}",
        f"{'path':<10}{'before':>8}{'in-sample':>11}{'held out':>10}  95% interval (held out)   L2",
    ]
    for path, f in v.paths.items():
        h = f.held_out
        lines.append(
            f"{path:<10}{f.before.agreement:>8.3f}{f.in_sample.agreement:>11.3f}"
            f"{h.agreement:>10.3f}  {h.low:.3f}–{h.high:.3f}{f.l2:>16g}"
        )
    w = v.weights
    for path, weights in (("content", w.content), ("image", w.image)):
        shown = ", ".join(f"{k} {x:.3f}" for k, x in weights.items())
        lines.append(f"weights, {path} path: {shown}")
    lines.append(
        f"guard floors: coverage {w.coverage_floor:g}, span {w.span_floor:g}, ink {w.ink_floor:g}"
        " (chosen on the pairs, and on each fold's other folds for the held-out figure)"
    )
    return lines


def _dimensions(c: Calibration, r: FitReport) -> list[str]:
    weights = c.weights or {}
    lines = [
        f"calibration {c.id} of release {c.release}: {r.judgements} judgement(s), "
        f"{r.decisive} decisive, {r.ties} tie(s), {r.both_bad} both bad "
        "(agreement is measured on decisive judgements; ties count half a win in the fit)",
        f"{'':<22}{'agreement':>10}  {'95% interval':<17}{'fitted weight':>14}",
    ]
    for name, a in r.dimensions.items():
        lines.append(
            f"{name:<22}{a.agreement:>10.3f}  {a.low:.3f}–{a.high:<11.3f}{weights[name]:>14.3f}"
        )
    for label, a in (("current composite", r.current), ("fitted (held out)", r.fitted)):
        lines.append(f"{label:<22}{a.agreement:>10.3f}  {a.low:.3f}–{a.high:.3f}")
    lines += threshold_lines(r)
    for rater in r.raters:
        consistency = "—" if rater.consistency is None else f"{rater.consistency:.2f}"
        flag = "  FLAGGED: below the consistency threshold" if rater.flagged else ""
        lines.append(
            f"rater {rater.rater}: {rater.judgements} judgement(s), {rater.repeats} "
            f"repeat(s), consistency {consistency}, both bad "
            f"{rater.both_bad:.1%}{flag}"
        )
    return lines


def threshold_lines(r: FitReport) -> list[str]:
    """Per threshold: the value the grades used, the chosen one, and every candidate's
    held-out log-loss and agreement (the last sweep's; ``*``: tied with the best)."""
    if not r.thresholds:
        return ["thresholds: not fitted (--no-thresholds): each case's own, or the release's"]
    lines = [
        f"thresholds: {r.sweeps} coordinate sweeps, {r.rescorings} re-grading(s) of an attempt "
        "at a setting (repeats remembered); per candidate its held-out log-loss (* a tie "
        "with the best) and agreement"
    ]
    for name, t in r.thresholds.items():
        lines.append(f"{name}: current {_current(t)}; chosen {_value(t.chosen)}")
        rows = {
            "value": [f"{_value(x.value)} " for x in t.trials],
            "log-loss": [f"{x.log_loss:.4f}{'*' if x.tied else ' '}" for x in t.trials],
            "agreement": [f"{x.agreement:.3f} " for x in t.trials],
        }
        for label, cells in rows.items():
            lines.append((f"  {label:<10}" + "".join(f"{v:>9}" for v in cells)).rstrip())
    return lines


def _value(value: float | None) -> str:
    return "own" if value is None else f"{value:g}"


def _current(t: ThresholdReport) -> str:
    """The value the grades used: one for every case, or each case's."""
    values = set(t.current.values())
    if len(values) == 1:
        return f"{values.pop():g}"
    return ", ".join(f"{case} {v:g}" for case, v in t.current.items())
