"""Grading speed: our SSIM against skimage's, the global visual score, one attempt's grade.

1. SSIM kernel. On page-like image pairs (generated here, deterministically, for each
   ``--sizes`` entry): the luma of both pages (Rec. 601, times 1000, as
   ``recon.grade.global_visual`` computes it for its SSIM term) scored by
   - ours: ``recon.grade._ssim.mean_ssim(x, y, scale=1000)`` on the int32 luma;
   - before: the same function as it was at ``--before`` (loaded from git), when given;
   - skimage: ``skimage.metrics.structural_similarity(x / 1000, y / 1000, win_size=7,
     data_range=255, gaussian_weights=False, use_sample_covariance=True)`` on the same
     luma as float64, the straightforward call that computes the same quantity.
   The three run interleaved, ``--repeat`` times; the table shows the least CPU time
   (``time.process_time``) and the JSON has every run, wall times too. Per pair: the
   ratios, ``|ours - skimage|`` and whether ours equals before bit for bit.
   Two candidates per size: *faithful* (the reference with a band shifted 2 px, one
   block recoloured, one paragraph rewritten: many rows still equal, as in a good
   reconstruction) and *every row differs* (the reference with one pixel changed in
   every row: no row is equal, so nothing is skipped; the worst case for ours).
2. ``global_visual.score`` as a whole, against the metric it replaced
   (``bench/global_visual_v1.py``, a frozen copy of ``global-visual/1``), interleaved in
   the same run, on each faithful and every-row-differs pair: ours on stills and DOM
   snapshots (the content path: blocks, matching, row map, weighted SSIM, CIEDE2000
   colour), ours on stills alone (the image path of workflow checkpoints), and v1 on the
   stills (alignment, luma, SSIM, colour cells, height term, ink blank guard). CPU per
   call and per megapixel of the reference, and ours over v1.
3. One attempt's grade: ``recon.grade.attempt.grade`` on a Build of six matrix points
   (``/`` at 390, 768 and 1440 px, states ``default`` and ``menu``, pages 3,000 to
   5,200 px tall), six sealed regions, seven assertions probed per viewport, a workflow
   with two oracle checkpoints, preservation checks, a network log, served assets and an
   evidence still. Timed as it is and with v1 patched in as its global visual,
   interleaved; per attempt and per megapixel of candidate stills graded.
4. Peak memory (``tracemalloc``, i.e. numpy's allocations) of ``global_visual.score``
   (ours with DOM, and v1) on a 1440 x 20,000 pair, and of each kernel's SSIM of that
   pair's full-size luma, not counting the inputs.

    .venv/bin/python bench/grade_speed.py [--repeat 5] [--before 3cf0e21]
        [--sizes 1440x900,1440x3000,390x2500,1440x20000] [--out bench/results/grade_speed.json]

A report, not a test: it prints tables and writes JSON; it asserts no times.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import subprocess
import time
import tracemalloc
import types
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import global_visual_v1  # bench/: the frozen baseline
import numpy as np
from PIL import Image
from skimage.metrics import structural_similarity

from recon.grade import _aligned, _gestalt, _ssim, global_visual
from recon.grade import attempt as attempt_grade
from recon.grade import workflow as workflow_metric
from recon.grade.attempt import Build, Probed, View
from recon.grade.policy import ORIGIN
from recon.model.grading import Grading
from recon.model.matrix import Point
from recon.model.viewport import Viewport

REPO = Path(__file__).resolve().parent.parent
BEFORE = "3cf0e21"
"""The last commit whose ``recon/grade/_ssim.py`` is the int64 cumulative-sum kernel."""
SIZES = "1440x900,1440x3000,390x2500,1440x20000"
TALL = (20_000, 1440)
NAVY, SKY, GREY, INK, WHITE = (
    (20, 30, 90),
    (200, 225, 250),
    (235, 235, 235),
    (30, 30, 30),
    (255,) * 3,
)
WORDS = ("widgets", "snap", "together", "so", "your", "team", "ships", "in", "days", "fast", "safe")
Dom = list[dict[str, Any]]


# --- page-like images with their DOM --------------------------------------------------


def element(tag: str, box: tuple[int, int, int, int], text: str = "", **kw: Any) -> dict[str, Any]:
    colour = kw.get("color", INK)
    return {
        "tag": tag,
        "role": kw.get("role", ""),
        "name": kw.get("name", ""),
        "text": text,
        "box": list(box),
        "color": f"rgb{colour}",
        "background": f"rgb{kw['background']}" if "background" in kw else "rgba(0, 0, 0, 0)",
        "font": {"family": "sans-serif", "size": "16px", "weight": "400"},
    }


def text_line(
    img: np.ndarray, rng: np.random.Generator, x: int, y: int, width: int, colour: Any
) -> str:
    """Glyph-like stripes 12 px tall, 7 px a character, words split by spaces."""
    chars = max(1, width // 7)
    words = [str(rng.choice(WORDS)) for _ in range(chars // 6 + 1)]
    text = " ".join(words)[:chars]
    ink = rng.random((12, chars)) < 0.4
    ink[:, [i for i, c in enumerate(text) if c == " "]] = False
    mask = np.zeros((12, chars * 7), dtype=bool)
    for col in range(5):  # 5 inked columns, 2 px of spacing per character
        mask[:, col::7] = ink
    region = img[y : y + 12, x : x + chars * 7]
    region[mask[: region.shape[0], : region.shape[1]]] = colour
    return text


def page(height: int, width: int, seed: int) -> tuple[np.ndarray, Dom]:
    """A white page: a header, then sections (tinted or not) of a heading, paragraphs
    and sometimes a row of cards, separated by white gaps; and its DOM snapshot."""
    rng = np.random.default_rng(seed)
    img = np.full((height, width, 3), 255, dtype=np.uint8)
    dom: Dom = [element("html", (0, 0, width, height)), element("body", (0, 0, width, height))]
    img[:72] = NAVY
    dom.append(element("header", (0, 0, width, 72), background=NAVY))
    title = text_line(img, rng, 24, 30, min(260, width - 24), WHITE)
    dom.append(element("h1", (24, 30, min(260, width - 24), 12), title, color=WHITE))
    y, margin = 112, max(12, width // 24)
    while y < height - 40:
        tall = int(rng.integers(220, 520))
        box = (0, y, width, min(tall, height - y))
        if rng.random() < 0.4:
            img[y : y + tall] = SKY
            dom.append(element("section", box, background=SKY))
        else:
            dom.append(element("section", box))
        line_w = width - 2 * margin
        heading = text_line(img, rng, margin, y + 24, line_w // 2, INK)
        dom.append(element("h2", (margin, y + 24, line_w // 2, 12), heading))
        ly = y + 60
        while ly < y + tall - 130:
            words = text_line(img, rng, margin, ly, int(line_w * rng.uniform(0.6, 1.0)), INK)
            dom.append(element("p", (margin, ly, line_w, 12), words))
            ly += 20
        if rng.random() < 0.5 and ly < height - 90:
            cards = 3 if width >= 700 else 1
            card_w = (line_w - (cards - 1) * margin) // cards
            for i in range(cards):
                cx = margin + i * (card_w + margin)
                img[ly : ly + 90, cx : cx + card_w] = GREY
                dom.append(element("article", (cx, ly, card_w, 90), background=GREY))
                label = text_line(img, rng, cx + 12, ly + 16, card_w - 24, INK)
                dom.append(element("h3", (cx + 12, ly + 16, card_w - 24, 12), label))
        y += tall + 40
    return img, dom


def faithful(ref: np.ndarray, dom: Dom, seed: int) -> tuple[np.ndarray, Dom]:
    """A good reconstruction: rows below mid-page 2 px lower, one block recoloured, one
    paragraph rewritten (other words, same place)."""
    rng = np.random.default_rng(seed)
    height, width = ref.shape[:2]
    img = ref.copy()
    mid = height // 2
    img[mid + 2 :] = ref[mid : height - 2]
    img[mid : mid + 2] = 255
    out = [
        e | {"box": [*e["box"][:1], e["box"][1] + 2, *e["box"][2:]]} if e["box"][1] >= mid else e
        for e in dom
    ]
    top = height // 4
    block = img[top : top + 60, width // 8 : width // 2]
    block[..., 0] = np.where(block[..., 0] > 40, block[..., 0] - 40, block[..., 0])
    paragraphs = [i for i, e in enumerate(out) if e["tag"] == "p" and e["box"][1] > 3 * height // 4]
    if paragraphs:
        i = paragraphs[0]
        x, y, w, _ = out[i]["box"]
        img[y : y + 12, x : x + w] = ref[y - 1, x : x + w]  # the row above: page background
        out[i] = out[i] | {"text": text_line(img, rng, x, y, w, INK)}
    return img, out


def every_row_differs(ref: np.ndarray, seed: int) -> np.ndarray:
    """The reference with one pixel in every row changed by one grey level."""
    rng = np.random.default_rng(seed)
    img = ref.copy()
    rows = np.arange(ref.shape[0])
    cols = rng.integers(0, ref.shape[1], ref.shape[0])
    img[rows, cols] ^= 1
    return img


# --- timing ---------------------------------------------------------------------------


def previous_kernel(rev: str) -> types.ModuleType:
    """``recon/grade/_ssim.py`` as it was at ``rev``, as a module."""
    path = "recon/grade/_ssim.py"
    source = subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType(f"ssim_at_{rev}")
    exec(compile(source, f"{rev}:{path}", "exec"), module.__dict__)
    return module


def interleaved(ways: dict[str, Callable[[], Any]], repeat: int) -> dict[str, dict[str, Any]]:
    """Run every way ``repeat`` times, alternating; CPU and wall seconds of each run."""
    runs: dict[str, dict[str, Any]] = {name: {"cpu_s": [], "wall_s": []} for name in ways}
    for i in range(repeat):
        order = list(ways) if i % 2 == 0 else list(reversed(ways))
        for name in order:
            cpu, wall = time.process_time(), time.perf_counter()
            runs[name]["value"] = ways[name]()
            runs[name]["cpu_s"].append(time.process_time() - cpu)
            runs[name]["wall_s"].append(time.perf_counter() - wall)
    for run in runs.values():
        run["cpu_min_s"] = min(run["cpu_s"])
        run["cpu_median_s"] = statistics.median(run["cpu_s"])
    return runs


def luma(img: np.ndarray) -> np.ndarray:
    return _aligned.luma(img, 1)


def kernels(
    x: np.ndarray, y: np.ndarray, before: types.ModuleType | None
) -> dict[str, Callable[[], float]]:
    """The mean SSIM of luma ``x`` and ``y`` (int32, luma * 1000) by each way compared."""
    xf, yf = x / 1000, y / 1000
    ways: dict[str, Callable[[], float]] = {
        "ours": lambda: _ssim.mean_ssim(x, y, scale=1000),
        "skimage": lambda: float(
            structural_similarity(
                xf,
                yf,
                win_size=7,
                data_range=255,
                gaussian_weights=False,
                use_sample_covariance=True,
            )
        ),
    }
    if before is not None:
        ways["before"] = lambda: float(before.mean_ssim(x, y, scale=1000))
    return ways


def kernel_pair(
    name: str, x: np.ndarray, y: np.ndarray, before: types.ModuleType | None, repeat: int
) -> dict[str, Any]:
    runs = interleaved(dict(kernels(x, y, before)), repeat)
    ours, sk = runs["ours"], runs["skimage"]
    equal_rows = np.flatnonzero(~np.any(x != y, axis=1)).size / x.shape[0]
    row: dict[str, Any] = {
        "pair": name,
        "height": x.shape[0],
        "width": x.shape[1],
        "megapixels": x.size / 1e6,
        "equal_rows": equal_rows,
        "ssim_ours": ours["value"],
        "ssim_skimage": sk["value"],
        "abs_diff_vs_skimage": abs(ours["value"] - sk["value"]),
        "skimage_over_ours": sk["cpu_min_s"] / ours["cpu_min_s"],
        "runs": runs,
    }
    if before is not None:
        row["before_over_ours"] = runs["before"]["cpu_min_s"] / ours["cpu_min_s"]
        row["ours_equals_before_bitwise"] = ours["value"].hex() == runs["before"]["value"].hex()
    return row


def score_pair(
    name: str, cand: np.ndarray, cand_dom: Dom, ref: np.ndarray, ref_dom: Dom, repeat: int
) -> dict[str, Any]:
    """Ours (content path, image path) and v1 on one pair, interleaved."""
    ways = {
        "ours": lambda: global_visual.score(
            cand, ref, candidate_dom=cand_dom, reference_dom=ref_dom
        ),
        "ours_image_path": lambda: global_visual.score(cand, ref),
        "v1": lambda: global_visual_v1.score(cand, ref),
        "gestalt": lambda: _gestalt.gestalt(cand, ref),
    }
    runs = interleaved(ways, repeat)
    megapixels = ref.shape[0] * ref.shape[1] / 1e6
    row: dict[str, Any] = {"pair": name, "megapixels": megapixels}
    gestalt = runs.pop("gestalt")
    gestalt.pop("value")
    row["gestalt"] = {"cpu_min_s": gestalt["cpu_min_s"], "runs": gestalt}
    for way, run in runs.items():
        result = run.pop("value")
        row[way] = {
            "score": result.score,
            "version": result.version,
            "cpu_min_s": run["cpu_min_s"],
            "cpu_s_per_megapixel": run["cpu_min_s"] / megapixels,
            "runs": run,
        }
    row["ours_over_v1"] = row["ours"]["cpu_min_s"] / row["v1"]["cpu_min_s"]
    row["image_path_over_v1"] = row["ours_image_path"]["cpu_min_s"] / row["v1"]["cpu_min_s"]
    # global-visual/6 computes all that /3 did plus the gestalt terms, typeface and span
    # (passes over the content blocks /3 built too, not timed apart): /3's cost is ours
    # less the gestalt terms', so this is /6 over /3
    ours = row["ours"]["cpu_min_s"]
    row["ours_over_v3"] = ours / max(ours - gestalt["cpu_min_s"], 1e-9)
    return row


# --- one attempt ----------------------------------------------------------------------

VIEWPORTS = {"mobile": (390, 5200), "tablet": (768, 3600), "desktop": (1440, 3000)}
STATES = ("default", "menu")
ASSERTIONS: list[dict[str, Any]] = [
    {"id": "heading", "locator": {"role": "heading", "name": "Acme"}, "expect": "visible"},
    {"id": "nav-links", "locator": {"css": "nav a"}, "expect": "count", "value": 3},
    {"id": "cta-text", "locator": {"test_id": "cta"}, "expect": "text", "value": "Start"},
    {
        "id": "cta-colour",
        "locator": {"test_id": "cta"},
        "expect": "css",
        "name": "color",
        "value": "rgb(255, 255, 255)",
    },
    {
        "id": "lang",
        "locator": {"css": "html"},
        "expect": "attribute",
        "name": "lang",
        "value": "en",
    },
    {"id": "email", "locator": {"label": "Email"}, "expect": "value", "value": ""},
    {"id": "no-dialog", "locator": {"role": "dialog"}, "expect": "hidden", "weight": 0.5},
]
KEPT = {**ASSERTIONS[4], "id": "keeps-lang"}
"""The preservation check: the lang assertion again, under its own id (ids are unique)."""


def grading() -> Grading:
    regions = [
        {"id": "header", "selector": "header", "viewport": "desktop"},
        {"id": "hero", "box": [0, 112, 1440, 300], "viewport": "desktop", "weight": 2.0},
        {"id": "middle", "box": [0, 1400, 1440, 400], "viewport": "desktop"},
        {"id": "footer", "box": [0, 2600, 1440, 300], "viewport": "desktop"},
        {"id": "tablet-top", "box": [0, 0, 768, 600], "viewport": "tablet"},
        {"id": "mobile-top", "box": [0, 0, 390, 800], "viewport": "mobile"},
    ]
    checkpoint = {"assertions": [ASSERTIONS[0]], "compare_oracle": True}
    workflow = {
        "id": "subscribe",
        "steps": [
            {"fill": {"label": "Email"}, "value": "a@example.com"},
            {"click": {"test_id": "cta"}},
            {"id": "sent", **checkpoint},
            {"id": "kept", "preserve": "reload", **checkpoint},
        ],
    }
    return Grading.model_validate(
        {
            "schema_version": 1,
            "regions": regions,
            "assertions": ASSERTIONS,
            "workflows": [workflow],
            "preservation": {"assertions": [KEPT], "regions": ["header"]},
            "weights": {
                "global_visual": 0.3,
                "regional_visual": 0.15,
                "functional": 0.2,
                "responsive": 0.15,
                "workflow": 0.1,
                "preservation": 0.05,
                "policy": 0.05,
            },
        }
    )


def build(seed: int, edit: bool) -> Build:
    """Six matrix points; ``edit`` makes the faithful-reconstruction variant."""
    views: dict[str, View] = {}
    rows: dict[str, list[dict[str, Any]]] = {}
    for v, (width, height) in VIEWPORTS.items():
        for state in STATES:
            img, dom = page(height, width, seed=100 * seed + len(views))
            if edit:
                img, dom = faithful(img, dom, seed)
            point = Point("/", Viewport(name=v, width=width, height=900), state)
            network = [[f"{ORIGIN}/app.js", "served"], ["https://cdn.example.com/x.js", "blocked"]]
            views[point.id] = View(point, img, tuple(dom), network)
        failed = {"no-dialog"} if edit else set()
        rows[v] = [
            {"id": a["id"], "passed": a["id"] not in failed, "observed": ""} for a in ASSERTIONS
        ]
    top = still(views["root.desktop.default"])[:900]
    shots = {workflow_metric.key("subscribe", c): top for c in ("sent", "kept")}
    flows = {
        workflow_metric.key("subscribe", c): [{"id": "heading", "passed": True}]
        for c in ("sent", "kept")
    }
    flows[workflow_metric.key("subscribe", "kept", preserved=True)] = [
        {"id": "heading", "passed": True}
    ]
    probed = Probed(
        assertions=rows,
        preservation=[{"id": KEPT["id"], "passed": True, "observed": "en"}],
        workflows=flows,
        screenshots=shots,
    )
    return Build(views=views, probed=probed)


def still(view: View) -> np.ndarray:
    assert view.image is not None
    return view.image


def png(img: np.ndarray) -> bytes:
    out = io.BytesIO()
    Image.fromarray(img).save(out, format="PNG")
    return out.getvalue()


def attempt(repeat: int) -> dict[str, Any]:
    sealed = grading()
    ref, cand, starter = build(1, edit=False), build(1, edit=True), build(2, edit=False)
    desktop = still(ref.views["root.desktop.default"])
    evidence = {"desktop.png": desktop[:900]}
    served = {
        f"{ORIGIN}/index.html": b"<!doctype html><title>Acme</title>" * 40,
        f"{ORIGIN}/logo.png": png(desktop[:64, :64]),
    }

    def run() -> dict[str, Any]:
        return attempt_grade.grade(
            sealed, cand, ref, starter, first_viewport="desktop", evidence=evidence, served=served
        )

    runs = interleaved({"ours": run, "v1": lambda: with_global_visual_v1(run)}, repeat)
    pixels = sum(v.image.size // 3 for v in cand.views.values() if v.image is not None)
    pixels += sum(s.shape[0] * s.shape[1] for s in cand.probed.screenshots.values())
    table, table_v1 = runs["ours"].pop("value"), runs["v1"].pop("value")
    return {
        "points": len(cand.views),
        "regions": len(sealed.regions),
        "assertions": len(sealed.assertions),
        "candidate_megapixels": pixels / 1e6,
        "total": table["total"],
        "dimensions": table["dimensions"],
        "total_v1": table_v1["total"],
        "dimensions_v1": table_v1["dimensions"],
        "cpu_min_s": runs["ours"]["cpu_min_s"],
        "cpu_s_per_megapixel": runs["ours"]["cpu_min_s"] / (pixels / 1e6),
        "v1_cpu_min_s": runs["v1"]["cpu_min_s"],
        "v1_cpu_s_per_megapixel": runs["v1"]["cpu_min_s"] / (pixels / 1e6),
        "ours_over_v1": runs["ours"]["cpu_min_s"] / runs["v1"]["cpu_min_s"],
        "runs": runs,
    }


def with_global_visual_v1(run: Callable[[], Any]) -> Any:
    """``run()`` with the frozen v1 metric as the attempt's global visual (stills only)."""
    shim = types.SimpleNamespace(
        score=lambda cand, ref, **_doms: global_visual_v1.score(cand, ref),
        VERSION=global_visual_v1.VERSION,
    )
    saved = attempt_grade.global_visual
    attempt_grade.global_visual = shim  # type: ignore[assignment]
    try:
        return run()
    finally:
        attempt_grade.global_visual = saved


# --- memory ---------------------------------------------------------------------------


def peak_mib(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def memory(
    ref: np.ndarray, ref_dom: Dom, cand: np.ndarray, cand_dom: Dom, before: types.ModuleType | None
) -> dict[str, Any]:
    report: dict[str, Any] = {
        "height": ref.shape[0],
        "width": ref.shape[1],
        "inputs_mib": (ref.nbytes + cand.nbytes) / 2**20,
        "score_peak_mib": peak_mib(
            lambda: global_visual.score(cand, ref, candidate_dom=cand_dom, reference_dom=ref_dom)
        ),
        "score_v1_peak_mib": peak_mib(lambda: global_visual_v1.score(cand, ref)),
    }
    for name, way in kernels(luma(cand), luma(ref), before).items():
        report[f"ssim_{name}_peak_mib"] = peak_mib(way)
    return report


# --- report ---------------------------------------------------------------------------


def print_report(report: dict[str, Any]) -> None:
    has_before = report["before"] is not None
    print(f"\nSSIM kernel, CPU seconds (least of {report['repeat']}); |diff| = |ours - skimage|")
    head = f"{'pair':34} {'MP':>6} {'equal rows':>10} {'ours':>8} {'skimage':>8} {'sk/ours':>8}"
    print(
        head + (f" {'before':>8} {'bef/ours':>8} {'bitwise':>7}" if has_before else "") + "  |diff|"
    )
    for r in report["kernel"]:
        runs = r["runs"]
        line = (
            f"{r['pair']:34} {r['megapixels']:6.2f} {r['equal_rows']:10.0%} "
            f"{runs['ours']['cpu_min_s']:8.3f} {runs['skimage']['cpu_min_s']:8.3f} "
            f"{r['skimage_over_ours']:7.2f}x"
        )
        if has_before:
            line += (
                f" {runs['before']['cpu_min_s']:8.3f} {r['before_over_ours']:7.2f}x"
                f" {'yes' if r['ours_equals_before_bitwise'] else 'NO':>7}"
            )
        print(line + f"  {r['abs_diff_vs_skimage']:.1e}")
    print("\nglobal_visual.score, CPU seconds (least of runs): ours (stills + DOM), ours on")
    print("stills only (image path), and the frozen v1 (stills), interleaved")
    print(
        f"{'pair':34} {'MP':>6} {'ours':>7} {'s/MP':>6} {'image':>7} {'v1':>7} {'s/MP':>6} "
        f"{'ours/v1':>8} {'score':>6} {'v1':>6} {'/6 over /3':>10}"
    )
    for r in report["score"]:
        ours, image, v1 = r["ours"], r["ours_image_path"], r["v1"]
        print(
            f"{r['pair']:34} {r['megapixels']:6.2f} {ours['cpu_min_s']:7.3f} "
            f"{ours['cpu_s_per_megapixel']:6.3f} {image['cpu_min_s']:7.3f} "
            f"{v1['cpu_min_s']:7.3f} {v1['cpu_s_per_megapixel']:6.3f} "
            f"{r['ours_over_v1']:7.2f}x {ours['score']:6.3f} {v1['score']:6.3f} "
            f"{r['ours_over_v3']:9.2f}x"
        )
    a = report["attempt"]
    print(
        f"\nattempt grade: {a['points']} points, {a['regions']} regions, {a['assertions']} "
        f"assertions, {a['candidate_megapixels']:.1f} MP of candidate stills: "
        f"{a['cpu_min_s']:.2f} s ({a['cpu_s_per_megapixel']:.3f} s/MP), total {a['total']:.4f}; "
        f"with v1 as global visual {a['v1_cpu_min_s']:.2f} s ({a['v1_cpu_s_per_megapixel']:.3f} "
        f"s/MP), total {a['total_v1']:.4f}; ours/v1 {a['ours_over_v1']:.2f}x"
    )
    m = report["memory"]
    print(
        f"\npeak traced memory, {m['width']}x{m['height']} pair (inputs {m['inputs_mib']:.0f} MiB "
        f"not counted): score {m['score_peak_mib']:.0f} MiB (v1 {m['score_v1_peak_mib']:.0f} "
        f"MiB); SSIM of full-size luma: ours {m['ssim_ours_peak_mib']:.0f} MiB, skimage "
        f"{m['ssim_skimage_peak_mib']:.0f} MiB"
        + (f", before {m['ssim_before_peak_mib']:.0f} MiB" if has_before else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--before", default=BEFORE, help="git revision of the old kernel; '' for none"
    )
    parser.add_argument("--sizes", default=SIZES, help="comma-separated WIDTHxHEIGHT pairs")
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/grade_speed.json")
    args = parser.parse_args()
    before = previous_kernel(args.before) if args.before else None
    kernel, scores = [], []
    tall: tuple[np.ndarray, Dom, np.ndarray, Dom] | None = None
    for size in args.sizes.split(","):
        width, height = (int(v) for v in size.split("x"))
        ref, dom = page(height, width, seed=1)
        cand, cand_dom = faithful(ref, dom, seed=2)
        worst = every_row_differs(ref, seed=3)
        kernel.append(kernel_pair(f"{size} faithful", luma(cand), luma(ref), before, args.repeat))
        kernel.append(
            kernel_pair(f"{size} every row differs", luma(worst), luma(ref), before, args.repeat)
        )
        scores.append(score_pair(f"{size} faithful", cand, cand_dom, ref, dom, args.repeat))
        scores.append(score_pair(f"{size} every row differs", worst, dom, ref, dom, args.repeat))
        if (height, width) == TALL:
            tall = ref, dom, cand, cand_dom
        print(f"measured {size}", flush=True)
    if tall is None:
        ref, dom = page(*TALL, seed=1)
        tall = ref, dom, *faithful(ref, dom, seed=2)
    report = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "skimage": metadata.version("scikit-image"),
            "load_average": os.getloadavg(),
        },
        "repeat": args.repeat,
        "before": args.before or None,
        "kernel": kernel,
        "score": scores,
        "attempt": attempt(args.repeat),
        "memory": memory(*tall, before),
    }
    print_report(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=float) + "\n")


if __name__ == "__main__":
    main()
