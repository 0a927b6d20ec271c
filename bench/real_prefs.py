"""Agreement of the visual metrics with people on real reconstructions (issue 28).

Reads a study laid out as ``../shared/prefs/real-reconstructions`` is
(``pages/<page>/<method>.html``, ``judgments.jsonl``; ``recon.calibrate.study``), renders
every judged page with recon's own capture path at the contract's desktop viewport
(1440 x 900; ``recon.calibrate.renders``, cached by digest under ``--cache``), scores each
reconstruction against its original (``recon.calibrate.consensus``: global visual's
content and image paths, plain SSIM, every term) and prints how often each agrees with
the raters' consensus (ties and disagreements left out), with a bootstrap 95% interval.

Candidates (``--candidates``, bench only, never the release path): variants of the image
path and layout/colour terms (``candidate_scores``), each fixed one measured as a metric,
and Bradley–Terry combinations of terms (``recon.calibrate.fit``) fitted on the training
study and measured by 5-fold held-out agreement, folds split by page; and the content
path blended with the image path (:func:`blended`), held out over five fold seeds with the
blend's share chosen inside each training fold. With ``--data DIR`` the fitted
combinations are fitted on ``--train`` and applied to DIR: nothing is fitted on DIR.
``--powers`` (the training study only; with ``--candidates`` 3 min 9 s on 2 idle cores,
renders cached): each path's terms raised to a power (:func:`powered`), held out the same
way, the power chosen inside each training fold by agreement and by the fit's own log-loss
rule. ``--ceiling``: per path, the most pairs one weighting of its terms agrees on in
sample (:func:`weighting_ceiling`, a seeded search), and the pairs no weighting drawn wins.

    PYTHONPATH=. .venv/bin/python bench/real_prefs.py [--train DIR] [--data DIR]
        [--cache store/cache/studies] [--candidates] [--powers] [--ceiling] [--json]
        [--prefs-out FILE]

A report, not a test: it asserts nothing. ``--json`` prints one object whose ``metrics``
maps ``content``, ``image`` and ``ssim`` to ``{"agree", "pairs", "share", "ties", "low",
"high"}``; ``regional`` gives the same for regional visual over the pairs whose page's
original holds a landmark region (:data:`LANDMARKS`: the study declares no region), with
the pages and the landmarks each holds. Bad input (a missing page, a malformed
judgement) is one line per problem naming the file and field, exit 2.
"""

from __future__ import annotations

import argparse
import inspect
import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from recon.calibrate.agreement import points, summarise
from recon.calibrate.consensus import (
    METRICS,
    Count,
    Scores,
    agreement_table,
    count,
    differences,
    page_scores,
    study_scores,
)
from recon.calibrate.fit import fit, group_folds
from recon.calibrate.renders import Cache, Render, Shoot, browser_shooter, render_all
from recon.calibrate.study import (
    ORIGINAL,
    Pair,
    Study,
    consensus,
    name,
    preferences,
    read_study,
)
from recon.calibrate.visual import TERMS, composed, fit_visual, judged, terms_of, trained
from recon.errors import ConfigError, ReconError
from recon.grade import global_visual, regional
from recon.grade._blocks import BODY_FONT_PX, blocks
from recon.grade._ink import backdrop
from recon.grade._match import match
from recon.grade.selectors import resolve_regions
from recon.model.grading import Region, Thresholds, VisualWeights
from recon.model.viewport import VIEWPORTS, Viewport
from recon.store import digest_bytes, digest_json, write_atomic

REPO = Path(__file__).resolve().parent.parent
TRAIN = REPO.parent / "shared" / "prefs" / "real-reconstructions"
CACHE = REPO / "store" / "cache" / "studies"
VIEWPORT = VIEWPORTS["desktop"]
RELEASE = "real-reconstructions"
Shooter = Callable[[Viewport], AbstractContextManager[Shoot]]


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--train", type=Path, default=TRAIN, help="the study fits are fitted on")
    p.add_argument("--data", type=Path, help="score this study, fitting nothing on it")
    p.add_argument("--cache", type=Path, default=CACHE, help="render and score cache folder")
    p.add_argument("--candidates", action="store_true", help="measure candidate terms")
    p.add_argument(
        "--powers", action="store_true", help="measure each path's terms raised to a power"
    )
    p.add_argument(
        "--ceiling",
        action="store_true",
        help="search each path's weightings for the most pairs any of them agrees on",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--prefs-out", type=Path, help="write the study as preference rows")
    p.add_argument(
        "--misses", type=Path, help="write each shipped path's misses as REF | A | B pictures"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--viewport",
        type=_size,
        default=VIEWPORT,
        help="WIDTHxHEIGHT to render at (default: the contract's desktop, 1440x900)",
    )
    return p.parse_args(argv)


def _size(text: str) -> Viewport:
    try:
        width, height = (int(v) for v in text.lower().split("x"))
        return Viewport("desktop", width, height)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"{text!r}: write WIDTHxHEIGHT, like 1280x800") from err


# --- renderer and grader digests: what the caches are keyed on -------------------------


@cache
def code_digest(kind: str) -> str:
    """The pipeline's code digest of a cell kind (modules, data, toolchain)."""
    return _codes().digest(kind)


@cache
def _codes() -> Any:
    from recon.pipeline.keys import Codes
    from recon.store import StatCache

    return Codes(StatCache(None))


def scorer_digest() -> str:
    """What the scores depend on: the grader's code, the consensus module and the source
    of this bench's candidate terms (not the rest of this file: a new combination to fit
    re-scores nothing)."""
    consensus = (REPO / "recon" / "calibrate" / "consensus.py").read_bytes()
    terms: list[Callable[..., Any]] = [
        candidate_scores,
        layout_colour,
        thumb,
        ink,
        _lab,
        _background,
        _palette,
        _ink_of,
        _size_match,
        _colour_match,
        text_style,
    ]
    source = "".join(inspect.getsource(f) for f in terms)
    constants = [THUMB_WIDTH, THUMB_HEIGHT, INK_RANGE, HEADLINE, SIZE_OCTAVES, DELTA_E]
    return digest_json(
        {
            "grade": code_digest("grade"),
            "consensus": digest_bytes(consensus),
            "terms": digest_bytes(source.encode()),
            "constants": constants,
        }
    )


def cached_scores(
    study: Study,
    renders: Mapping[str, Render],
    cache: Path,
    digest: str,
    score: Callable[[Render, Render], Scores],
) -> dict[str, Scores]:
    """:func:`study_scores`, each reconstruction's scores cached by its two renders'
    digests and the scorer's."""

    def scored(cand: Render, ref: Render) -> Scores:
        key = digest_json({"cand": cand.digest, "ref": ref.digest, "scorer": digest})
        path = cache / "scores" / key[:2] / f"{key}.json"
        if path.is_file():
            return dict(json.loads(path.read_text()))
        found = score(cand, ref)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(found, sort_keys=True).encode())
        return found

    return study_scores(study, renders, scored)


# --- candidate terms (bench only) -------------------------------------------------------

THUMB_WIDTH = 100
"""Pages are compared as the raters saw them, small: 100 px wide (a quarter of their 400)."""
THUMB_HEIGHT = 600
"""The top 2,400 px of a 400 px column, at the thumbnail's scale."""
INK_RANGE = 8
"""A 16 px tile whose luma range is at most this is flat (no ink)."""


def thumb(img: np.ndarray) -> np.ndarray:
    """The page's top at 100 px wide, white-padded to THUMB_HEIGHT rows, as float RGB."""
    height, width = img.shape[:2]
    rows = max(1, round(height * THUMB_WIDTH / width))
    small = np.asarray(
        Image.fromarray(img).resize((THUMB_WIDTH, rows), Image.Resampling.BOX), dtype=np.float64
    )[:THUMB_HEIGHT]
    out = np.full((THUMB_HEIGHT, THUMB_WIDTH, 3), 255.0)
    out[: small.shape[0]] = small
    return out


def ink(img: np.ndarray) -> float:
    """Share of the page's 16 px tiles that are not flat."""
    luma = img[..., :3].astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    h, w = (luma.shape[0] // 16) * 16, (luma.shape[1] // 16) * 16
    if h == 0 or w == 0:
        return 0.0
    tiles = luma[:h, :w].reshape(h // 16, 16, w // 16, 16)
    spread = tiles.max(axis=(1, 3)) - tiles.min(axis=(1, 3))
    return float((spread > INK_RANGE).mean())


def _lab(rgb: np.ndarray) -> np.ndarray:
    from skimage.color import rgb2lab

    return np.asarray(rgb2lab(rgb / 255.0))


def layout_colour(cand: np.ndarray, ref: np.ndarray) -> Scores:
    """Thumbnail terms: ``thumb_colour`` (1 − mean ΔE76 / 50 of the blurred thumbnails),
    ``layout`` (IoU of the thumbnails' non-background cells) and ``palette`` (histogram
    intersection of 4x4x4-bin colour histograms)."""
    a, b = thumb(cand), thumb(ref)
    la, lb = _lab(a), _lab(b)
    delta = np.sqrt(((la - lb) ** 2).sum(axis=2)).mean()
    bg_a, bg_b = _background(a), _background(b)
    fa = np.abs(a - bg_a).max(axis=2) > 24
    fb = np.abs(b - bg_b).max(axis=2) > 24
    union = (fa | fb).sum()
    iou = float((fa & fb).sum() / union) if union else 1.0
    return {
        "thumb_colour": 1.0 - min(1.0, delta / 50.0),
        "layout": iou,
        "palette": _palette(a, b),
        "background": 1.0 - min(1.0, float(np.abs(bg_a - bg_b).max()) / 128.0),
    }


def _background(img: np.ndarray) -> np.ndarray:
    """The most common 8-level-quantised colour of a thumbnail."""
    q = (img // 32).astype(np.int64).reshape(-1, 3)
    codes = q[:, 0] * 64 + q[:, 1] * 8 + q[:, 2]
    top = int(np.bincount(codes, minlength=512).argmax())
    mask = codes == top
    return np.asarray(img.reshape(-1, 3)[mask].mean(axis=0))


def _palette(a: np.ndarray, b: np.ndarray) -> float:
    def hist(img: np.ndarray) -> np.ndarray:
        q = (img // 64).astype(np.int64).reshape(-1, 3)
        h = np.bincount(q[:, 0] * 16 + q[:, 1] * 4 + q[:, 2], minlength=64).astype(float)
        return h / h.sum()

    return float(np.minimum(hist(a), hist(b)).sum())


HEADLINE = 1.5
"""A reference text block is a headline when its font size is at least this times the
page's median text size (the largest size when none is)."""
SIZE_OCTAVES = 1.0
"""A paired text set this many octaves (doublings) larger or smaller matches not at all."""
DELTA_E = 50.0
"""A ΔE2000 of this much between two colours is no match at all."""


def _ink_of(element: Mapping[str, Any]) -> Mapping[str, Any]:
    """An element's recorded ink ({} without own text or in an older snapshot)."""
    ink = element.get("ink")
    return ink if isinstance(ink, Mapping) else {}


def _size_match(a: float, b: float) -> float:
    return 1.0 - min(1.0, abs(math.log2(max(a, 1.0) / max(b, 1.0))) / SIZE_OCTAVES)


def _colour_match(a: Sequence[float], b: Sequence[float]) -> float:
    from skimage.color import deltaE_ciede2000

    pair = _lab(np.array([[a[:3], b[:3]]], dtype=np.float64))
    return 1.0 - min(1.0, float(deltaE_ciede2000(pair[0, 0], pair[0, 1])) / DELTA_E)


def text_style(cand: Render, ref: Render) -> Scores:
    """Paired text styled as the reference's (bench only), over the reference's text blocks
    paired by the content path (``_blocks``, ``_match``), each weighted as the content path
    weighs it: ``text_size`` (font sizes within ``SIZE_OCTAVES``), ``text_fill`` (glyph
    colour) and ``text_backdrop`` (the colour behind the text; ΔE2000 over ``DELTA_E``);
    and ``headline``: the reference's headlines (``HEADLINE``), each weighted by
    √characters x size, found at the same size, the same horizontal place (its centre or
    left edge within a quarter of the width) and height (within 900 px); 0 when unpaired."""
    want, got = blocks(ref.dom, ref.image).shown, blocks(cand.dom, cand.image).shown
    paired = {p.ref: p.cand for p in match(want, got)}
    texts = [i for i, b in enumerate(want) if b.kind == "text" and _ink_of(ref.dom[b.index])]
    if not texts:
        return {}
    size = {i: float(_ink_of(ref.dom[want[i].index]).get("size") or BODY_FONT_PX) for i in texts}
    body, top = float(np.median(list(size.values()))), max(size.values())
    heads = [i for i in texts if size[i] >= min(top, HEADLINE * body)]
    sums = {k: [0.0, 0.0] for k in ("text_size", "text_fill", "text_backdrop", "headline")}
    width = ref.image.shape[1]
    for i in texts:
        r = want[i]
        c = got[paired[i]] if i in paired else None
        ci = _ink_of(cand.dom[c.index]) if c is not None and c.kind == "text" else {}
        ri = _ink_of(ref.dom[r.index])
        if ci and c is not None:
            cs = float(ci.get("size") or BODY_FONT_PX)
            fills = [list(ink.get("fill") or (0, 0, 0))[:3] for ink in (ci, ri)]
            found = {
                "text_size": _size_match(cs, size[i]),
                "text_fill": _colour_match(*fills),
                "text_backdrop": _colour_match(
                    backdrop(cand.dom[c.index]), backdrop(ref.dom[r.index])
                ),
            }
            for k, v in found.items():
                sums[k][0] += r.weight * v
                sums[k][1] += r.weight
        if i in heads:
            w = math.sqrt(len(r.text)) * size[i]
            sums["headline"][1] += w
            if ci and c is not None:
                rx, cx = r.box[0] + r.box[2] / 2, c.box[0] + c.box[2] / 2
                place = min(abs(r.box[0] - c.box[0]), abs(rx - cx)) / (width / 4)
                height = abs(r.box[1] - c.box[1]) / 900
                sums["headline"][0] += (
                    w * found["text_size"] * (1 - min(1.0, place)) * (1 - min(1.0, height))
                )
    return {k: a / b if b > 0 else 0.0 for k, (a, b) in sums.items()}


def candidate_scores(cand: Render, ref: Render) -> Scores:
    """The shipped scores (:func:`page_scores`) and the bench's candidate terms beside them."""
    scores = page_scores(cand, ref)
    scores |= {f"cand.{k}": v for k, v in layout_colour(cand.image, ref.image).items()}
    scores["cand.ink_ratio"] = ink(cand.image) / max(ink(ref.image), 1e-9)
    scores |= {f"cand.{k}": v for k, v in text_style(cand, ref).items()}
    return scores


CEILING = "every measured term, either sign (a linear fit's ceiling)"
"""The combination fitted with each term twice, as it is and negated: the fit's β ≥ 0 on
both is a signed weight, so this is plain L2 logistic regression on every term the bench
measures, both paths' and the candidates'. What no re-weighting of these terms can beat
held out, up to its own fitting noise."""
PATHS = {
    path: [f"{path}.{term}" for term in weights] for path, weights in global_visual.WEIGHTS.items()
}
"""The shipped metric's fit: each path's appearance terms, weighed as people weigh them."""
FEATURES = {
    "content path (shipped terms)": PATHS["content"],
    "image path (shipped terms)": PATHS["image"],
    "content path, global-visual/3's terms": [
        "content.content", "content.ssim", "content.colour", "content.position",
    ],
    "image path, global-visual/3's terms": ["image.ssim", "image.colour"],
    "image path + thumbnail colour, background": [
        *PATHS["image"], "cand.thumb_colour", "cand.background",
    ],
    "content path + headline": [*PATHS["content"], "cand.headline"],
    "content path + paired text's size, fill, backdrop": [
        *PATHS["content"], "cand.text_size", "cand.text_fill", "cand.text_backdrop",
    ],
    CEILING: [
        *PATHS["content"], *PATHS["image"], "content.shape", "content.ssim_unweighted",
        "content.coverage", "content.span", "content.content", "content.text",
        "content.added", "content.order", "content.guard", "image.guard",
        "cand.thumb_colour", "cand.background", "cand.text_size", "cand.text_fill",
        "cand.text_backdrop", "cand.headline",
    ],
}  # fmt: skip
"""Bradley–Terry combinations measured held out: name -> the terms it weighs."""


def design(pairs: Sequence[Pair], scores: Mapping[str, Scores], features: list[str]) -> np.ndarray:
    cols = [differences(pairs, scores, f) for f in features]
    return np.nan_to_num(np.stack(cols, axis=1))


def fitted(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], seed: int
) -> dict[str, dict[str, Any]]:
    """Each combination's 5-fold held-out agreement (folds by page) and its weights."""
    winner = np.array([p.winner for p in pairs], dtype=np.float64)
    target = (winner + 1) / 2
    fold = group_folds([p.page for p in pairs], seed)
    out = {}
    for label, features in FEATURES.items():
        x = design(pairs, scores, features)
        signed = label == CEILING
        model = fit(np.hstack([x, -x]) if signed else x, target, seed, fold)
        held = model.held_out
        beta = model.beta[: x.shape[1]] - model.beta[x.shape[1] :] if signed else model.beta
        scale = float(np.abs(beta).sum()) or 1.0
        out[label] = {
            "held_out": {
                "share": round(held.agreement, 6),
                "low": round(held.low, 6),
                "high": round(held.high, 6),
                "pairs": held.judgements,
            },
            "weights": dict(zip(features, np.round(beta / scale, 4).tolist(), strict=True)),
            "beta": beta.tolist(),
        }
    return out


def shipped_held_out(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], seed: int
) -> dict[str, Any]:
    """The shipped metric's k-fold figure per path, as ``recon calibrate fit --study``
    measures it (``recon.calibrate.visual``): on each fold, the weights are fitted on the
    other folds' pairs and the composed score (guard included) judges the held-out pairs
    (folds by page: no page is in both)."""
    _weights, paths, _floors = fit_visual(pairs, scores, seed)
    return {
        path: {
            "held_out": {"share": f.held_out.agreement, "low": f.held_out.low,
                         "high": f.held_out.high, "pairs": f.held_out.judgements},
            "weights per fold": [{k: round(v, 3) for k, v in w.items()} for w in f.folds],
        }
        for path, f in paths.items()
    }  # fmt: skip


def applied(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], train: Mapping[str, Any], seed: int
) -> dict[str, dict[str, Any]]:
    """The training fits' β applied to another study's pairs (nothing fitted on them)."""
    winner = np.array([p.winner for p in pairs], dtype=np.float64)
    out = {}
    for label, features in FEATURES.items():
        beta = np.array(train[label]["beta"])
        got = summarise(points(design(pairs, scores, features) @ beta, winner), seed)
        out[label] = {"share": round(got.agreement, 6), "low": round(got.low, 6),
                      "high": round(got.high, 6), "pairs": got.judgements}  # fmt: skip
    return out


BLEND = tuple(i / 10 for i in range(11))
"""α, the image path's share of a blended content-path score, (1 − α)·content + α·image."""
FOLD_SEEDS = 5
"""How many fold seeds (0, 1, …) :func:`blended` splits the pages with."""


def _blend_points(
    pairs: Sequence[Pair],
    scores: Mapping[str, Scores],
    w: VisualWeights,
    alphas: Sequence[float],
) -> np.ndarray:
    """Per α (rows), per pair: 1 / 0 / 0.5 as the blended score agrees, disagrees or ties."""
    shown = {name(p.page, m) for p in pairs for m in (p.a, p.b)}
    c = {k: composed(scores[k], "content", w) for k in shown}
    i = {k: composed(scores[k], "image", w) for k in shown}
    winners = np.array([p.winner for p in pairs], dtype=np.float64)
    dc = np.array([c[name(p.page, p.a)] - c[name(p.page, p.b)] for p in pairs])
    di = np.array([i[name(p.page, p.a)] - i[name(p.page, p.b)] for p in pairs])
    return np.array([points((1 - a) * dc + a * di, winners) for a in alphas]).reshape(
        len(alphas), len(pairs)
    )


def _held_blends(pairs: Sequence[Pair], scores: Mapping[str, Scores], seed: int) -> np.ndarray:
    """Per α, per pair, the held-out points: 5 folds by page, each fold's weights and floors
    fitted on the other folds' pairs (:func:`trained`, as the shipped fit does)."""
    fold = group_folds([p.page for p in pairs], seed)
    got = np.zeros((len(BLEND), len(pairs)))
    for f in range(int(fold.max()) + 1):
        w = trained([p for p, k in zip(pairs, fold, strict=True) if k != f], scores, seed)
        held = [p for p, k in zip(pairs, fold, strict=True) if k == f]
        got[:, fold == f] = _blend_points(held, scores, w, BLEND)
    return got


def blended(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], seeds: Sequence[int]
) -> dict[str, Any]:
    """The content path blended with the image path, held out for each fold seed: per α
    (:data:`BLEND`; α = 0 is the shipped content path) the pairs it agrees on, and
    ``nested``, α chosen on each fold's training pairs alone (their own folds by page, the
    smallest α among equals) and judged on the held-out fold, so that the choice of α is
    held out too. The spread over seeds is how much one split of 20 pages decides."""
    n = len(pairs)

    def row(agree: Sequence[float]) -> dict[str, Any]:
        return {"agree": [float(a) for a in agree], "mean_share": float(np.mean(agree)) / n}

    per_alpha = np.array([_held_blends(pairs, scores, seed).sum(axis=1) for seed in seeds]).T
    found = {
        "pairs": n,
        "seeds": list(seeds),
        "alpha": {f"{a:.1f}": row(per_alpha[i]) for i, a in enumerate(BLEND)},
    }
    try:
        nested, chosen = zip(*(_nested_blend(pairs, scores, seed) for seed in seeds), strict=True)
    except ConfigError as err:  # too few pages to fold three times
        return found | {"nested": {"skipped": str(err)}}
    return found | {"nested": row(nested) | {"chosen": list(chosen)}}


def _nested_blend(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], seed: int
) -> tuple[float, list[float]]:
    """The held-out count with α chosen per fold on its training pairs, and the αs."""
    fold = group_folds([p.page for p in pairs], seed)
    got, picks = 0.0, []
    for f in range(int(fold.max()) + 1):
        kept = [p for p, k in zip(pairs, fold, strict=True) if k != f]
        best = int(np.argmax(_held_blends(kept, scores, seed).sum(axis=1)))
        picks.append(BLEND[best])
        held = [p for p, k in zip(pairs, fold, strict=True) if k == f]
        got += float(_blend_points(held, scores, trained(kept, scores, seed), BLEND)[best].sum())
    return got, picks


POWERS = (1, 2, 3, 4)
"""p: each appearance term ``t`` of both paths read as ``t^p`` before the weighted mean (1
stays 1, so a reference still scores 1); p = 1 is the shipped metric."""


def raised(scores: Mapping[str, Scores], p: int) -> dict[str, Scores]:
    """Every reconstruction's scores with each path's appearance terms raised to ``p``
    (a term below 0 read as 0); every other number as it is."""
    terms = {f"{path}.{t}" for path, names in TERMS.items() for t in names}
    return {
        k: {t: max(v, 0.0) ** p if t in terms else v for t, v in found.items()}
        for k, found in scores.items()
    }


Fits = list[dict[int, VisualWeights]]
"""Per fold, per p: the weights and floors fitted on the other folds' pairs."""


def _held_powers(
    pairs: Sequence[Pair], by_power: Mapping[int, Mapping[str, Scores]], seed: int
) -> tuple[dict[str, np.ndarray], Fits]:
    """Per path, per p (rows), per pair: the held-out points, 5 folds by page, each fold's
    weights and floors fitted on the other folds' pairs of the raised scores; and those
    fits."""
    fold = group_folds([p.page for p in pairs], seed)
    got = {path: np.zeros((len(POWERS), len(pairs))) for path in TERMS}
    fits: Fits = []
    for f in range(int(fold.max()) + 1):
        kept = [p for p, k in zip(pairs, fold, strict=True) if k != f]
        held = [p for p, k in zip(pairs, fold, strict=True) if k == f]
        fits.append({power: trained(kept, by_power[power], seed) for power in POWERS})
        for i, power in enumerate(POWERS):
            for path in TERMS:
                got[path][i, fold == f] = judged(held, by_power[power], path, fits[f][power])
    return got, fits


def log_loss(pairs: Sequence[Pair], scores: Mapping[str, Scores], seed: int, path: str) -> float:
    """The Bradley–Terry fit's held-out log-loss on the path's terms (folds by page): the
    rule that chooses the fit's L2 (``recon.calibrate.fit``)."""
    features = [f"{path}.{t}" for t in TERMS[path]]
    target = (np.array([p.winner for p in pairs], dtype=np.float64) + 1) / 2
    fold = group_folds([p.page for p in pairs], seed)
    return fit(design(pairs, scores, features), target, seed, fold).log_loss


def powered(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], seeds: Sequence[int]
) -> dict[str, Any]:
    """Each path with its appearance terms raised to p (:data:`POWERS`), held out for each
    fold seed: per p the pairs it agrees on, and p chosen on each fold's training pairs
    alone, two ways: ``nested`` by their own held-out agreement (folds by page again, the
    smallest p among equals) and ``nested_log_loss`` by the Bradley–Terry fit's held-out
    log-loss (:func:`log_loss`, the rule the shipped fit chooses its L2 by)."""
    n = len(pairs)
    by_power = {power: raised(scores, power) for power in POWERS}

    def row(agree: Sequence[float]) -> dict[str, Any]:
        return {"agree": [float(a) for a in agree], "mean_share": float(np.mean(agree)) / n}

    held = {seed: _held_powers(pairs, by_power, seed) for seed in seeds}
    found: dict[str, Any] = {"pairs": n, "seeds": list(seeds), "paths": {}}
    for path in TERMS:
        per_power = np.array([got[path].sum(axis=1) for got, _fits in held.values()]).T
        found["paths"][path] = {str(p): row(per_power[i]) for i, p in enumerate(POWERS)}
    try:
        nested = [_nested_powers(pairs, by_power, seed, held[seed][1]) for seed in seeds]
    except ConfigError as err:  # too few pages to fold three times
        return found | {"nested": {"skipped": str(err)}}
    for rule in ("nested", "nested_log_loss"):
        found[rule] = {
            path: row([got[rule][path][0] for got in nested])
            | {"chosen": [got[rule][path][1] for got in nested]}
            for path in TERMS
        }
    return found


def _nested_powers(
    pairs: Sequence[Pair], by_power: Mapping[int, Mapping[str, Scores]], seed: int, fits: Fits
) -> dict[str, dict[str, tuple[float, list[int]]]]:
    """Per rule, per path: the held-out count with p chosen per fold on its training pairs,
    and the ps. ``fits``: :func:`_held_powers`' on the same folds (the chosen p's fit on a
    fold's training pairs is one of them)."""
    fold = group_folds([p.page for p in pairs], seed)
    rules = ("nested", "nested_log_loss")
    agreed = {rule: dict.fromkeys(TERMS, 0.0) for rule in rules}
    chosen: dict[str, dict[str, list[int]]] = {rule: {path: [] for path in TERMS} for rule in rules}
    for f in range(int(fold.max()) + 1):
        kept = [p for p, k in zip(pairs, fold, strict=True) if k != f]
        held = [p for p, k in zip(pairs, fold, strict=True) if k == f]
        inner, _inner_fits = _held_powers(kept, by_power, seed)
        for path in TERMS:
            losses = [log_loss(kept, by_power[p], seed, path) for p in POWERS]
            picks = {
                "nested": int(np.argmax(inner[path].sum(axis=1))),
                "nested_log_loss": int(np.argmin(losses)),
            }
            for rule, i in picks.items():
                power = POWERS[i]
                w = fits[f][power]
                agreed[rule][path] += float(judged(held, by_power[power], path, w).sum())
                chosen[rule][path].append(power)
    return {r: {path: (agreed[r][path], chosen[r][path]) for path in TERMS} for r in rules}


DRAWS = 200_000
"""How many weightings :func:`weighting_ceiling` draws at random, before it draws as many
around its best three times over, each time closer."""
CHUNK = 20_000
REFINE = (200.0, 50.0, 20.0)
"""The Dirichlet concentrations around the best weighting so far, one round each."""


Sides = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _ceiling_sides(
    pairs: Sequence[Pair], scores: Mapping[str, Scores], path: str, weights: VisualWeights
) -> Sides:
    """Per side of each pair (a, b, a, b, ...): the path's appearance terms, which of them
    apply (1 / 0), the guard under ``weights``' floors, and the score of a side the path's
    weights do not compose (a page composed by the other path: its score under ``weights``,
    fixed; else 0)."""
    every = weights.model_copy(update={p: dict.fromkeys(TERMS[p], 1.0) for p in TERMS})
    values, applies, guards, fixed = [], [], [], []
    for key in (name(p.page, m) for p in pairs for m in (p.a, p.b)):
        found = terms_of(scores[key], path)
        composed_terms = global_visual.compose(found, every).terms
        own = (found["content_applicable"] == 1.0) == (path == "content")
        values.append([found.get(t, 0.0) for t in TERMS[path]])
        applies.append([composed_terms[f"w_{t}"] if own else 0.0 for t in TERMS[path]])
        guards.append(composed_terms["guard"] if own else 0.0)
        fixed.append(0.0 if own else composed(scores[key], path, weights))
    return (np.nan_to_num(np.array(values, dtype=np.float64)), np.array(applies),
            np.array(guards), np.array(fixed))  # fmt: skip


def weighting_ceiling(
    pairs: Sequence[Pair],
    scores: Mapping[str, Scores],
    seed: int,
    draws: int = DRAWS,
    weights: VisualWeights = global_visual.DEFAULT,
) -> dict[str, Any]:
    """Per path, the most pairs any weighting of its appearance terms agrees on, in sample,
    the guard's floors as ``weights`` has them: the best of ``weights``' own weighting,
    ``draws`` drawn at random over the simplex (Dirichlet, α = 0.7, seeded) and ``draws``
    more around the best so far for each of :data:`REFINE`. A search, so a floor under the
    true ceiling. One weighting for every pair: held out, each fold is judged by weights
    fitted without it (and its own floors), which may agree where no one weighting does, but
    a fit that never saw the pairs it judges seldom comes near the best weighting for them.
    Also the pairs no weighting drawn agrees on: what only another term can win."""
    winner = np.array([p.winner for p in pairs], dtype=np.float64)
    rng = np.random.default_rng(seed)
    out: dict[str, Any] = {"pairs": len(pairs), "draws": draws * (1 + len(REFINE)) + 1}
    for path in TERMS:
        sides = _ceiling_sides(pairs, scores, path, weights)
        shipped = np.array([weights.path(path).get(t, 0.0) for t in TERMS[path]])
        got = _ceiling_points(shipped[None, :], sides, winner)
        best, best_w, ever = float(got.sum()), shipped, got[:, 0] == 1.0
        for concentration in (None, *REFINE):
            for start in range(0, draws, CHUNK):
                size = min(CHUNK, draws - start)
                alpha = np.full(len(shipped), 0.7) if concentration is None else (
                    best_w * concentration + 1e-3)  # fmt: skip
                w = rng.dirichlet(alpha, size)
                got = _ceiling_points(w, sides, winner)
                ever |= (got == 1.0).any(axis=1)
                totals = got.sum(axis=0)
                if totals.max() > best:
                    best, best_w = float(totals.max()), w[int(totals.argmax())]
        score_w = _ceiling_points(best_w[None, :], sides, winner)[:, 0]
        n = len(pairs)
        out[path] = {
            "agree": best, "pairs": n, "share": round(best / n, 6) if n else 0.0,
            "weights": dict(zip(TERMS[path], np.round(best_w, 3).tolist(), strict=True)),
            "missed": [_pair_label(p) for p, s in zip(pairs, score_w, strict=True) if s < 1],
            "never": [_pair_label(p) for p, e in zip(pairs, ever, strict=True) if not e],
        }  # fmt: skip
    return out


def _ceiling_points(w: np.ndarray, sides: Sides, winner: np.ndarray) -> np.ndarray:
    """Per pair, per weighting (a row of ``w``): its point (:func:`points`)."""
    values, applies, guards, fixed = sides
    total = applies @ w.T
    mean = (values * applies) @ w.T / np.where(total > 0, total, 1.0)
    score = np.clip(fixed[:, None] + guards[:, None] * mean, 0.0, 1.0)
    return points(score[0::2] - score[1::2], winner[:, None])


def _pair_label(p: Pair) -> str:
    won, lost = (p.a, p.b) if p.winner > 0 else (p.b, p.a)
    return f"{p.page}: {won} over {lost}"


LANDMARKS = ("header", "nav", "footer", "h1")
"""Regional visual on a study, which declares no region: each page's regions are the first
element of each of these tags its original shows (desktop, weight 1 each)."""


def landmarks(reference: Render) -> list[Region]:
    """The landmark regions a study page's original maps onto (:data:`LANDMARKS`)."""
    found = []
    for tag in LANDMARKS:
        region = Region(id=tag, selector=tag, viewport="desktop")
        box = resolve_regions([region], reference.dom).boxes.get(tag)
        if box is not None and box[2] * box[3] > 0:
            found.append(region)
    return found


def regional_report(
    study: Study, renders: Mapping[str, Render], pairs: Sequence[Pair], seed: int
) -> dict[str, Any]:
    """Regional visual's agreement with the consensus over the pairs whose page's original
    holds a landmark region (issue 28: "checked the same way where a region maps")."""
    scores: dict[str, Scores] = {}
    mapped: dict[str, list[str]] = {}
    for key in study.pages:
        page, method = key.split("/", 1)
        regions = landmarks(renders[name(page, ORIGINAL)])
        if method == ORIGINAL or not regions:
            scores[key] = {}
            continue
        mapped[page] = [r.id for r in regions]
        ref, cand = renders[name(page, ORIGINAL)], renders[key]
        got = regional.score(
            regions,
            {"desktop": regional.Still(cand.image, cand.dom)},
            {"desktop": regional.Still(ref.image, ref.dom)},
            Thresholds(),
        )
        scores[key] = {"regional": got.score}
    winner = np.array([p.winner for p in pairs], dtype=np.float64)
    found = count(differences(pairs, scores, "regional"), winner, seed).as_json()
    return found | {"pages": len(mapped), "landmarks": dict(sorted(mapped.items()))}


def white_page(renders: Mapping[str, Render], study: Study) -> dict[str, float]:
    """What a white page of each original's size scores on the image path (median), and
    the share of real reconstructions that score below it on the same page."""
    white, below, total = [], 0, 0
    for key, ref in renders.items():
        page, method = key.split("/", 1)
        if method != ORIGINAL:
            continue
        blank = np.full_like(ref.image, 255)
        w = global_visual.score(blank, ref.image).score
        white.append(w)
        for other, render in renders.items():
            if other.startswith(f"{page}/") and other != key:
                total += 1
                below += global_visual.score(render.image, ref.image).score < w
    return {"white_median": float(np.median(white)), "below_white": below / max(1, total)}


# --- misses as pictures ----------------------------------------------------------------

MISS_COLUMN = 200
"""Each column of a miss picture: this wide, at most 6 x its width tall (the raters saw
400 x 2,400)."""


def write_misses(
    folder: Path, pairs: Sequence[Pair], renders: Mapping[str, Render], scores: Mapping[str, Scores]
) -> dict[str, list[dict[str, Any]]]:
    """Each path's misses (pairs where the shipped score is lower for the raters' choice)
    as ``<path>-<n>-<page>.png``: REF | chosen | other, and the terms that decided them
    (the weighted differences chosen − other, largest first)."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*-[0-9][0-9]-*.png"):  # the previous run's pictures
        old.unlink()
    out: dict[str, list[dict[str, Any]]] = {}
    for path, weights in global_visual.WEIGHTS.items():
        rows: list[dict[str, Any]] = []
        for p in pairs:
            won, lost = (p.a, p.b) if p.winner > 0 else (p.b, p.a)
            sw, sl = scores[name(p.page, won)], scores[name(p.page, lost)]
            if sw[path] > sl[path]:
                continue
            terms = {k: round(w * (sw[f"{path}.{k}"] - sl[f"{path}.{k}"]), 4)
                     for k, w in weights.items()
                     if w > 0 and f"{path}.{k}" in sw and f"{path}.{k}" in sl}  # fmt: skip
            terms["guard"] = round(sw[f"{path}.guard"] - sl[f"{path}.guard"], 4)
            picture = folder / f"{path}-{len(rows) + 1:02d}-{p.page}.png"
            _side_by_side([renders[name(p.page, m)].image for m in (ORIGINAL, won, lost)], picture)
            rows.append({
                "picture": picture.name, "page": p.page, "chosen": won, "other": lost,
                "scores": [round(sw[path], 4), round(sl[path], 4)],
                "terms": dict(sorted(terms.items(), key=lambda kv: kv[1])),
            })  # fmt: skip
        out[path] = rows
    return out


def _side_by_side(images: Sequence[np.ndarray], path: Path) -> None:
    smalls = []
    for img in images:
        top = np.ascontiguousarray(img[: 6 * img.shape[1], :, :3])
        rows = max(1, round(top.shape[0] * MISS_COLUMN / img.shape[1]))
        smalls.append(np.asarray(Image.fromarray(top).resize((MISS_COLUMN, rows))))
    height = max(small.shape[0] for small in smalls)
    canvas = np.full((height, len(images) * (MISS_COLUMN + 8) - 8, 3), 160, dtype=np.uint8)
    for i, small in enumerate(smalls):
        x = i * (MISS_COLUMN + 8)
        canvas[: small.shape[0], x : x + MISS_COLUMN] = small
    Image.fromarray(canvas).quantize(256).save(path, optimize=True)


# --- the run ----------------------------------------------------------------------------


def load(
    root: Path, cache: Path, shooter: Shooter, candidates: bool, viewport: Viewport = VIEWPORT
) -> tuple[Study, dict[str, Render], dict[str, Scores]]:
    study = read_study(root)

    def progress(page: str, cached: bool) -> None:
        if not cached:
            print(f"rendered {page}", file=sys.stderr, flush=True)

    renders = render_all(
        study.pages, viewport, code_digest("capture"), Cache(cache), lambda: shooter(viewport),
        progress,
    )  # fmt: skip
    score = candidate_scores if candidates else page_scores
    digest = digest_json({"scorer": scorer_digest(), "candidates": candidates})
    return study, renders, cached_scores(study, renders, cache, digest, score)


def summary(study: Study, table: Mapping[str, Count]) -> dict[str, Any]:
    kinds = [row.consensus for _, row in study.judgements]
    return {
        "judgements": len(kinds),
        "pairs": sum(k in ("a", "b") for k in kinds),
        "ties": kinds.count("tie"),
        "disagreements": kinds.count("disagree"),
        "metrics": {m: table[m].as_json() for m in METRICS},
        "terms": {m: c.as_json() for m, c in table.items() if m not in METRICS},
    }


def run(args: argparse.Namespace, shooter: Shooter = browser_shooter) -> dict[str, Any]:
    root = args.data or args.train
    study, renders, scores = load(root, args.cache, shooter, args.candidates, args.viewport)
    pairs = consensus(study)
    table = agreement_table(pairs, scores, args.seed)
    report = {"data": str(root), "viewport": args.viewport.model_dump()} | summary(study, table)
    report["medians"] = {
        k: float(np.median([s[k] for s in scores.values()]))
        for k in ("content", "image", "content.ssim", "content.ssim_unweighted", "image.ssim")
    }
    if args.prefs_out:
        digests = {k: r.digest for k, r in renders.items()}
        rows, same = preferences(study, RELEASE, digests)
        lines = "".join(r.model_dump_json() + "\n" for r in rows)
        args.prefs_out.write_text(lines, encoding="utf-8")
        report["preference_rows"] = {"written": len(rows), "same_still": same}
    report["regional"] = regional_report(study, renders, pairs, args.seed)
    if args.misses:
        report["misses"] = write_misses(args.misses, pairs, renders, scores)
    if args.candidates:
        report["white_page"] = white_page(renders, study)
        report["fitted"] = _fits(args, pairs, scores, shooter)
        if args.data is None:
            report["blended"] = blended(pairs, scores, range(FOLD_SEEDS))
    if args.powers and args.data is None:
        report["powered"] = powered(pairs, scores, range(FOLD_SEEDS))
    if args.ceiling:
        report["ceiling"] = weighting_ceiling(pairs, scores, args.seed)
    return report


def _fits(
    args: argparse.Namespace,
    pairs: Sequence[Pair],
    scores: Mapping[str, Scores],
    shooter: Shooter,
) -> dict[str, Any]:
    if args.data is None:
        found = fitted(pairs, scores, args.seed)
        return {"k-fold": found, "shipped, k-fold": shipped_held_out(pairs, scores, args.seed)}
    if not (args.train / "judgments.jsonl").is_file():
        return {"skipped": f"no training study at {args.train}; pass --train"}
    train, _renders, train_scores = load(args.train, args.cache, shooter, True, args.viewport)
    trained = fitted(consensus(train), train_scores, args.seed)
    return {"applied from --train": applied(pairs, scores, trained, args.seed)}


def text(report: Mapping[str, Any]) -> str:
    lines = [
        f"{report['data']}: {report['judgements']} judgement(s), {report['pairs']} consensus "
        f"pair(s), {report['ties']} tie(s), {report['disagreements']} disagreement(s) left "
        f"out; rendered at {report['viewport']['width']} x {report['viewport']['height']}",
        f"{'metric or term':40} {'agree':>6} {'pairs':>6} {'share':>7}  95% interval",
    ]
    rows = {**report["metrics"], **report["terms"]}
    for label, c in rows.items():
        lines.append(
            f"{label:40} {c['agree']:>6} {c['pairs']:>6} {c['share']:>7.3f}  "
            f"{c['low']:.3f}–{c['high']:.3f}"
        )
    r = report["regional"]
    lines.append(
        f"{'regional visual, landmark regions':40} {r['agree']:>6} {r['pairs']:>6} "
        f"{r['share']:>7.3f}  {r['low']:.3f}–{r['high']:.3f}  ({r['pages']} page(s) whose "
        f"original has a {' / '.join(LANDMARKS)})"
    )
    medians = ", ".join(f"{k} {v:.3f}" for k, v in report["medians"].items())
    lines.append(f"medians over the reconstructions: {medians}")
    if "white_page" in report:
        w = report["white_page"]
        lines.append(
            f"white page, image path: median {w['white_median']:.3f}; "
            f"{w['below_white']:.1%} of reconstructions score below it"
        )
    for path, rows in report.get("misses", {}).items():
        lines.append(f"{path} path misses ({len(rows)}), REF | chosen | other:")
        for r in rows:
            lines.append(
                f"  {r['picture']}: {r['chosen']} {r['scores'][0]:.3f} < {r['other']} "
                f"{r['scores'][1]:.3f}; weighted term differences {r['terms']}"
            )
    for how, fits in report.get("fitted", {}).items():
        if how == "skipped":
            lines.append(f"fitted combinations skipped: {fits}")
            continue
        lines.append(f"fitted combinations ({how}, folds by page):")
        for label, f in fits.items():
            h = f.get("held_out", f)
            lines.append(f"  {label:38} {h['share']:.3f}  {h['low']:.3f}–{h['high']:.3f}")
            if "weights" in f:
                lines.append(f"    weights {f['weights']}")
            if "weights per fold" in f:
                lines.append(f"    weights per fold {f['weights per fold']}")
    if "blended" in report:
        b = report["blended"]
        lines.append(
            f"content path blended with the image path, (1 - a) content + a image, held out "
            f"on 5 folds by page for fold seeds {b['seeds']} (pairs agreed per seed, mean share):"
        )
        nested = b["nested"]
        blends = [*b["alpha"].items()]
        blends += [] if "skipped" in nested else [("a chosen in the training folds", nested)]
        for label, r in blends:
            agree = " ".join(f"{a:g}" for a in r["agree"])
            lines.append(f"  a = {label:34} {agree:>24}  {r['mean_share']:.3f}")
        chosen = nested.get("chosen", nested.get("skipped"))
        lines.append(f"  a chosen per fold, per seed: {chosen}")
    if "powered" in report:
        lines.extend(_powered_lines(report["powered"]))
    if "ceiling" in report:
        lines.extend(_ceiling_lines(report["ceiling"]))
    return "\n".join(lines)


def _ceiling_lines(found: Mapping[str, Any]) -> list[str]:
    lines = [
        f"the most pairs any weighting of a path's terms agrees on in sample (best of "
        f"{found['draws']:,} weightings, the shipped floors):"
    ]
    for path in TERMS:
        c = found[path]
        lines.append(f"  {path:7} {c['agree']:g} of {c['pairs']} ({c['share']:.3f}) "
                     f"weights {c['weights']}")  # fmt: skip
        lines.append(f"    missed: {'; '.join(c['missed']) or 'none'}")
        lines.append(f"    missed by every weighting drawn: {'; '.join(c['never']) or 'none'}")
    return lines


def _powered_lines(found: Mapping[str, Any]) -> list[str]:
    lines = [
        "each path's appearance terms raised to p, held out on 5 folds by page for fold seeds "
        f"{found['seeds']} (pairs agreed per seed, mean share):"
    ]
    skipped = "skipped" in found.get("nested", {})
    for path, per_power in found["paths"].items():
        rows = [(f"p = {p}", r) for p, r in per_power.items()]
        if not skipped:
            rows += [("p chosen by agreement", found["nested"][path]),
                     ("p chosen by log-loss", found["nested_log_loss"][path])]  # fmt: skip
        for label, r in rows:
            agree = " ".join(f"{a:g}" for a in r["agree"])
            chosen = f"  chosen {r['chosen']}" if "chosen" in r else ""
            lines.append(f"  {path:7} {label:22} {agree:>24}  {r['mean_share']:.3f}{chosen}")
    if skipped:
        lines.append(f"  p chosen per fold: {found['nested']['skipped']}")
    return lines


def main(argv: Sequence[str] | None = None, shooter: Shooter = browser_shooter) -> int:
    args = parse(argv)
    try:
        report = run(args, shooter)
    except ReconError as err:
        print(f"real_prefs: {err}", file=sys.stderr)
        return err.exit_code
    print(json.dumps(report, sort_keys=True) if args.json else text(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
