"""Render throughput with browser reuse against a browser per capture; peak render memory.

1. Throughput. The matrix points of the demo case's sealed reference
   (``cases/html5-boilerplate``: ``/`` at desktop, mobile and tablet), captured
   in ``--rounds`` rounds, the ways interleaved round by round: *reuse* (per round, one
   chromium renders the matrix ``--per-browser`` times: what ``BrowserPool`` does for
   a worker, whose browser serves every cell of a build) and *launch*
   (``open_browser()`` per capture, the matrix once per round); plus, as a floor,
   *bare*: plain playwright, reused like *reuse*, a fresh context and the two
   screenshots per point and nothing else. For each way: wall time and CPU time
   (user + sys of this process and of every child, chromium included, read from
   ``getrusage`` once the browsers have exited). Captures per CPU-second is the
   "per core" figure: it does not depend on how many cores the machine lends.
   Where a capture's wall time goes: the mean of ``Capture.timings`` per phase (open,
   goto, settle, screenshots, snapshot) over the *reuse* captures, plus ``close`` (the
   rest of the call: closing the context) and, for *launch*, the browser launch and
   close around it.
2. The stability proof (``recon.render.stills``): per round, each matrix point of the
   demo case captured with it (``capture(...)``: the full-page still taken again a frame
   later and compared) and without it (``capture(..., prove=False)``: one still of each
   kind), in the same browser, the order alternating round by round. Reported: mean wall
   ms per capture each way and their ratio, the mean of the ``screenshots`` phase each way,
   and the mean ``settle_still`` (settling in page steps until still, in both ways).
3. Peak memory. A generated page 20,000 px tall (text, boxes, gradients) captured at
   desktop size (full page + viewport + DOM snapshot). A thread samples every 20 ms
   the memory of this process and of all its descendants (the playwright driver and
   the chromium processes) from ``/proc/<pid>/smaps_rollup``; the peaks of the sums of
   PSS (shared pages split between the processes sharing them: the honest total) and
   of RSS (shared pages counted once per process: an upper bound) are reported, with
   the RSS before the browser was launched.
4. recon against bare playwright (``--only matrix``). Every matrix point of every case
   (``--matrix-cases`` names fewer), ``--matrix-repeat`` times per round, captured by
   ``recon.render.capture`` and by bare playwright doing the same steps and stills (a
   fresh context, the route, ``goto``, the point's steps with playwright's own locators,
   the full page twice and the first screen), at ``-n 1`` and ``-n 2`` (that many
   threads, each with its browser, as ``BrowserPool`` gives ``doit -n K -P thread``), the
   ways' order alternating round by round. Each browser's first capture is a warm-up;
   ``wall`` runs from every warm-up's end to the last capture's end, ``cpu`` is this
   process tree's CPU time over it (read live from /proc: chromium's renderers are not
   all reaped up to this process, so ``getrusage`` misses part of their time), and
   ``block`` is the whole round (launches, warm-ups and closes). Reported
   per way: captures per second and per CPU-second, the mean ms of each phase of a
   capture (recon's ``Capture.timings``; bare's lapped the same way), the mean ms of a
   capture of the demo release's cases, and the 1-minute load average seen. Each round
   also measures ``-n 1`` with the ways alternating point by point in one browser
   (``n1alt``): a burst of other jobs' load then falls on both ways alike.

    PYTHONPATH=. .venv/bin/python bench/render_capture.py [--rounds 3] [--per-browser 5]
        [--stability-rounds 8] [--height 20000] [--matrix-rounds 2] [--matrix-repeat 2]
        [--matrix-cases A,B] [--only {throughput,stability,memory,matrix}]
        [--out bench/results/render_capture.json]

``PYTHONPATH=.`` makes it measure this checkout's ``recon`` (a script's own folder, not the
working directory, is on ``sys.path``); the JSON names the one it measured.
A report, not a test: it prints a table and writes JSON; it asserts no times.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import resource
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from PIL import Image
from playwright.sync_api import Browser, Page, Route
from playwright.sync_api import Locator as PwLocator

import recon
from recon.model import Contract, load_yaml
from recon.model.interaction import Locator, Offset, Step
from recon.model.matrix import Point, points
from recon.render import ORIGIN, Reader, Viewport, browser_version, open_browser
from recon.render.capture import capture

REPO = Path(__file__).resolve().parent.parent
CASE = REPO / "cases" / "html5-boilerplate"
PAGE_HEIGHT = 20_000


PHASES = ("open", "goto", "settle", "screenshots", "snapshot")


@dataclass
class Tally:
    captures: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    capture_ms: float = 0.0  # summed wall ms inside capture() calls
    phases_ms: dict[str, float] = field(default_factory=dict)  # summed Capture.timings

    def add(self, other: Tally) -> None:
        self.captures += other.captures
        self.wall += other.wall
        self.cpu += other.cpu

    def count(self, timings: dict[str, float], wall_ms: float) -> None:
        self.capture_ms += wall_ms
        for phase in PHASES:
            self.phases_ms[phase] = self.phases_ms.get(phase, 0.0) + timings.get(phase, 0.0)

    def mean_phases_ms(self, block_ms: float) -> dict[str, float]:
        """Mean ms per capture: each phase, ``close`` (the rest of capture()), and the
        rest of the timed block per capture (browser launch and close)."""
        n = max(1, self.captures)
        out = {phase: round(ms / n, 1) for phase, ms in self.phases_ms.items()}
        out["close"] = round((self.capture_ms - sum(self.phases_ms.values())) / n, 1)
        out["browser"] = round((block_ms - self.capture_ms) / n, 1)
        return out


def folder_reader(root: Path) -> Reader:
    def read(rel: str) -> bytes | None:
        path = (root / rel).resolve()
        inside = root.resolve() in path.parents
        return path.read_bytes() if inside and path.is_file() else None

    return read


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


@contextmanager
def measured(tally: Tally, captures: int) -> Iterator[None]:
    """Wall and CPU time of the block; children count once they have exited."""
    wall, cpu = time.monotonic(), _cpu()
    yield
    tally.add(Tally(captures, time.monotonic() - wall, _cpu() - cpu))


def shoot(browser: Browser, read: Reader, point: Point, tally: Tally) -> None:
    vp = point.viewport
    start = time.monotonic()
    shot = capture(browser, read, point.route, Viewport(vp.name, vp.width, vp.height))
    tally.count(shot.timings, (time.monotonic() - start) * 1000)
    if shot.failure:
        raise SystemExit(f"{point.id}: capture failed: {shot.failure}")


def reuse_round(read: Reader, pts: list[Point], tally: Tally) -> None:
    with measured(tally, len(pts)), open_browser() as browser:
        for point in pts:
            shoot(browser, read, point, tally)


def launch_round(read: Reader, pts: list[Point], tally: Tally) -> None:
    for point in pts:
        with measured(tally, 1), open_browser() as browser:
            shoot(browser, read, point, tally)


def bare_round(read: Reader, pts: list[Point], tally: Tally) -> None:
    """The floor: plain playwright, one browser, a fresh context and the two stills per
    point, none of the harness's settling, clock, isolation or snapshot."""

    def fulfil(route: Route) -> None:
        body = read(urlsplit(route.request.url).path.lstrip("/") or "index.html")
        route.fulfill(status=200 if body is not None else 404, body=body or b"")

    with measured(tally, len(pts)), open_browser() as browser:
        for point in pts:
            vp = point.viewport
            context = browser.new_context(viewport={"width": vp.width, "height": vp.height})
            context.route("**/*", fulfil)
            page = context.new_page()
            page.goto(ORIGIN + point.route)
            page.screenshot(full_page=True)
            page.screenshot()
            context.close()


def throughput(rounds: int, per_browser: int) -> dict[str, Tally]:
    read = folder_reader(CASE / "sealed" / "reference")
    pts = points(load_yaml(Contract, CASE / "public" / "contract.yaml"))
    reuse_round(read, pts[:1], Tally())  # warm the page cache, fontconfig, imports
    many = pts * per_browser  # what one browser renders in a round when it is reused
    tallies = {"reuse": Tally(), "launch": Tally(), "bare": Tally()}
    ways: list[tuple[str, Callable[[Reader, list[Point], Tally], None]]] = [
        ("reuse", reuse_round),
        ("launch", launch_round),
        ("bare", bare_round),
    ]
    for index in range(rounds):
        for name, way in ways if index % 2 == 0 else ways[::-1]:
            way(read, pts if name == "launch" else many, tallies[name])
    return tallies


# --- recon against bare playwright, every case's matrix, -n 1 and -n 2 ------------------


Phases = dict[str, float]  # wall ms of one capture, per phase
Job = tuple[str, Reader, Point]  # case, its build, one matrix point
DEMO = ("html5-boilerplate", "todomvc")  # releases/demo.yaml's cases


class Laps:
    """Wall ms since the previous lap, per phase name."""

    def __init__(self) -> None:
        self.phases: Phases = {}
        self._last = time.monotonic()

    def __call__(self, phase: str) -> None:
        now = time.monotonic()
        self.phases[phase] = self.phases.get(phase, 0.0) + (now - self._last) * 1000
        self._last = now


def bare_capture(browser: Browser, read: Reader, point: Point) -> Phases:
    """Bare playwright doing what a recon capture does, none of its settling, clock,
    isolation or snapshot: a fresh context, the route, the point's steps, and the same
    three stills (the full page twice, as recon's stability proof takes it, and the
    first screen). Its phases are lapped with ``time.monotonic()`` (nanoseconds each)."""

    def fulfil(route: Route) -> None:
        body = read(urlsplit(route.request.url).path.lstrip("/") or "index.html")
        route.fulfill(status=200 if body is not None else 404, body=body or b"")

    vp = point.viewport
    laps = Laps()
    context = browser.new_context(viewport={"width": vp.width, "height": vp.height})
    try:
        context.route("**/*", fulfil)
        page = context.new_page()
        laps("open")
        page.goto(ORIGIN + point.route)
        laps("goto")
        for step in point.steps:
            bare_step(page, step)
        laps("steps")
        page.screenshot(full_page=True)
        page.screenshot(full_page=True)
        page.screenshot()
        laps("screenshots")
    finally:
        context.close()
    laps("close")
    return laps.phases


def bare_locator(page: Page, loc: Locator) -> PwLocator:
    """Playwright's own locator for one of the contract's."""
    if loc.role is not None:
        return page.get_by_role(loc.role, name=loc.name, exact=True)  # type: ignore[arg-type]
    found = {"label": page.get_by_label, "text": page.get_by_text, "title": page.get_by_title,
             "placeholder": page.get_by_placeholder, "alt": page.get_by_alt_text}  # fmt: skip
    for kind, get in found.items():
        if getattr(loc, kind) is not None:
            return get(getattr(loc, kind), exact=True)
    if loc.test_id is not None:
        return page.get_by_test_id(loc.test_id)
    return page.locator(loc.css or "")


def bare_step(page: Page, step: Step) -> None:
    """One contract step in plain playwright, no settling after it."""
    target = step.target
    if step.action in ("goto", "reload"):
        page.goto(ORIGIN + step.goto) if step.goto else page.reload()
    elif step.action == "scroll" and isinstance(target, Offset):
        page.mouse.wheel(target.x, target.y)
    elif step.action == "press" and target is None:
        page.keyboard.press(step.key or "")
    else:
        assert isinstance(target, Locator)
        element = bare_locator(page, target)
        act = {"click": lambda: element.click(), "fill": lambda: element.fill(step.value or ""),
               "press": lambda: element.press(step.key or ""), "hover": lambda: element.hover(),
               "scroll": lambda: element.scroll_into_view_if_needed(),
               "wait_for": lambda: element.wait_for()}  # fmt: skip
        act[step.action]()


RECON_PHASES = ("open", "goto", "settle", "steps", "screenshots", "snapshot")


def recon_capture(browser: Browser, read: Reader, point: Point) -> Phases:
    """recon's capture of the point; its ``Capture.timings`` phases, and ``close`` (the
    rest of the call: closing the context)."""
    vp = point.viewport
    start = time.monotonic()
    shot = capture(browser, read, point.route, Viewport(vp.name, vp.width, vp.height),
                   steps=point.steps)  # fmt: skip
    wall = (time.monotonic() - start) * 1000
    if shot.failure:
        raise SystemExit(f"{point.id}: capture failed: {shot.failure}")
    phases = {phase: shot.timings.get(phase, 0.0) for phase in RECON_PHASES}
    return {**phases, "close": wall - sum(phases.values())}


Way = Callable[[Browser, Reader, Point], Phases]
Done = tuple[str, Phases, float]  # case, phases, the capture's wall ms


@dataclass
class Share:
    """One thread's jobs and what it did: its captures, and when its last one ended."""

    jobs: list[Job]
    done: list[Done] = field(default_factory=list)
    ended: float = 0.0


def _worker(way: Way, share: Share, gates: Gates, errors: list[BaseException]) -> None:
    try:
        with open_browser() as browser:
            _, read, point = share.jobs[0]
            way(browser, read, point)  # warm: the browser's first page
            gates.start.wait()
            for case, read, point in share.jobs[1:]:
                start = time.monotonic()
                phases = way(browser, read, point)
                share.done.append((case, phases, (time.monotonic() - start) * 1000))
            share.ended = time.monotonic()
            gates.end.wait()  # the main thread reads the CPU time before any browser closes
            gates.close.wait()
    except BaseException as err:  # handed to the main thread
        gates.abort()
        errors.append(err)


class Gates:
    """Where a round's threads and the main thread meet: after the warm-ups, after the last
    capture, and before the browsers close."""

    def __init__(self, threads: int) -> None:
        self.start, self.end, self.close = (threading.Barrier(threads + 1) for _ in range(3))

    def abort(self) -> None:
        for gate in (self.start, self.end, self.close):
            gate.abort()


@dataclass
class Round:
    captures: int
    wall: float  # s, from every browser's warm-up done to the last capture's end
    block: float  # s, the whole round: launches, warm-ups and closes too
    cpu: float  # s, of this process tree over ``wall``
    done: list[Done]


def matrix_round(way: Way, jobs: list[Job], threads: int) -> Round:
    """``jobs`` split over ``threads`` threads, each with a browser of its own (what
    ``doit -n K -P thread`` gets from ``BrowserPool``). Each browser first renders its
    first job, a warm-up outside ``captures``, ``wall`` and ``cpu``; ``block`` is the
    whole round."""
    shares = [Share(jobs[i::threads]) for i in range(threads)]
    errors: list[BaseException] = []
    gates = Gates(threads)
    workers = [threading.Thread(target=_worker, args=(way, s, gates, errors)) for s in shares]
    block = time.monotonic()
    for worker in workers:
        worker.start()
    with suppress(threading.BrokenBarrierError):  # a worker failed: raised below
        gates.start.wait()
        cpu, start = tree_cpu(), time.monotonic()
        gates.end.wait()
        cpu = tree_cpu() - cpu
        gates.close.wait()
    for worker in workers:
        worker.join()
    if errors:
        raise errors[0]
    done = [d for share in shares for d in share.done]
    wall = max(share.ended for share in shares) - start
    return Round(len(done), wall, time.monotonic() - block, cpu, done)


def alternating_round(ways: dict[str, Way], jobs: list[Job]) -> dict[str, Round]:
    """-n 1 with the ways alternating point by point in one browser (the order flipping
    at every point), so that a burst of load from other jobs falls on both: per way, the
    sum of its captures' wall time and of their CPU time (this process tree's, read live
    from /proc around each capture)."""
    done: dict[str, list[Done]] = {name: [] for name in ways}
    cpu = dict.fromkeys(ways, 0.0)
    with open_browser() as browser:
        for way in ways.values():
            way(browser, *jobs[0][1:])  # warm: the browser's first page, each way
        for index, (case, read, point) in enumerate(jobs[1:]):
            order = list(ways.items()) if index % 2 == 0 else list(ways.items())[::-1]
            for name, way in order:
                before, start = tree_cpu(), time.monotonic()
                phases = way(browser, read, point)
                ms = (time.monotonic() - start) * 1000
                cpu[name] += tree_cpu() - before
                done[name].append((case, phases, ms))
    return {
        name: Round(len(rows), sum(ms for *_, ms in rows) / 1000, 0.0, cpu[name], rows)
        for name, rows in done.items()
    }


def tree_cpu() -> float:
    """CPU s (user + sys) of this process and its live descendants, and of the children
    they have reaped (chromium's renderers of closed contexts)."""
    ticks = 0
    for pid in descendants(os.getpid()):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile
        ticks += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return ticks / os.sysconf("SC_CLK_TCK")


def matrix_jobs(repeat: int, only: list[str]) -> tuple[list[str], list[Job]]:
    jobs: list[Job] = []
    cases = sorted(p.parent for p in (REPO / "cases").glob("*/case.yaml"))
    cases = [c for c in cases if not only or c.name in only]
    for case in cases:
        read = folder_reader(case / "sealed" / "reference")
        contract = load_yaml(Contract, case / "public" / "contract.yaml")
        jobs += [(case.name, read, pt) for pt in points(contract)]
    return [c.name for c in cases], jobs * repeat


def matrix(rounds: int, repeat: int, only: list[str]) -> dict[str, Any]:
    """Every case's matrix (or ``only`` those cases'), recon's capture against bare
    playwright, at -n 1 and -n 2."""
    cases, jobs = matrix_jobs(repeat, only)
    ways: dict[str, Way] = {"recon": recon_capture, "bare": bare_capture}
    runs: dict[str, list[Round]] = {f"{w}-{n}": [] for w in ways for n in ("n1", "n2", "n1alt")}
    loads = [os.getloadavg()[0]]
    for index in range(rounds):
        order = list(ways.items()) if index % 2 == 0 else list(ways.items())[::-1]
        for threads in (1, 2):
            for name, way in order:
                runs[f"{name}-n{threads}"].append(matrix_round(way, jobs, threads))
                loads.append(os.getloadavg()[0])
        for name, row in alternating_round(dict(order), jobs).items():
            runs[f"{name}-n1alt"].append(row)
        loads.append(os.getloadavg()[0])
    out: dict[str, Any] = {"cases": cases, "points": len(jobs) // repeat, "demo": list(DEMO)}
    out["load_1min"] = [round(min(loads), 1), round(max(loads), 1)]
    out.update({key: summary(rows) for key, rows in runs.items()})
    for n in ("n1", "n2", "n1alt"):
        mine, bare = out[f"recon-{n}"], out[f"bare-{n}"]
        out[f"ratio_{n}"] = round(bare["per_s"] / mine["per_s"], 2)
        out[f"demo_ratio_{n}"] = round(mine["demo_ms"] / bare["demo_ms"], 2)
        if n != "n1alt":
            out[f"ratio_{n}_block"] = round(mine["block"] / bare["block"], 2)
    return out


def summary(rows: list[Round]) -> dict[str, Any]:
    """Totals of a way's rounds: captures, wall, block and CPU s, captures per second and
    per CPU-second, the mean ms per phase of a capture, and the mean ms of a capture of
    the demo release's cases."""
    n = sum(r.captures for r in rows)
    wall, block, cpu = (
        round(sum(getattr(r, k) for r in rows), 2) for k in ("wall", "block", "cpu")
    )
    done = [d for r in rows for d in r.done]
    phases: dict[str, float] = {}
    for _, row, _ in done:
        for phase, ms in row.items():
            phases[phase] = phases.get(phase, 0.0) + ms
    demo = [ms for case, _, ms in done if case in DEMO]
    return {
        "captures": n, "wall": wall, "block": block, "cpu": cpu,
        "per_s": round(n / wall, 3), "per_cpu_s": round(n / cpu, 3),
        "phases_ms": {phase: round(ms / n, 1) for phase, ms in phases.items()},
        "demo_captures": len(demo), "demo_ms": round(sum(demo) / max(1, len(demo)), 1),
    }  # fmt: skip


def print_matrix(row: dict[str, Any]) -> None:
    print(
        f"cases {', '.join(row['cases'])}: {row['points']} matrix points, load {row['load_1min']}"
    )
    print(f"{'way':<10}{'captures':>9}{'wall s':>9}{'cpu s':>9}{'per s':>9}{'per cpu-s':>11}"
          f"{'demo ms':>9}")  # fmt: skip
    for key in ("recon-n1", "bare-n1", "recon-n2", "bare-n2", "recon-n1alt", "bare-n1alt"):
        r = row[key]
        print(f"{key:<10}{r['captures']:>9}{r['wall']:>9.2f}{r['cpu']:>9.2f}{r['per_s']:>9.3f}"
              f"{r['per_cpu_s']:>11.3f}{r['demo_ms']:>9.0f}")  # fmt: skip
        print("  ms per capture: " + ", ".join(f"{k} {v:.0f}" for k, v in r["phases_ms"].items()))
    print(
        f"recon's time per capture over bare playwright's: {row['ratio_n1']:.2f}x at -n 1, "
        f"{row['ratio_n2']:.2f}x at -n 2 (target <= 1.5x); whole rounds with launches and "
        f"warm-ups {row['ratio_n1_block']:.2f}x and {row['ratio_n2_block']:.2f}x; demo cases' "
        f"captures {row['demo_ratio_n1']:.2f}x and {row['demo_ratio_n2']:.2f}x"
    )
    print(
        f"-n 1 with the ways alternating point by point in one browser: "
        f"{row['ratio_n1alt']:.2f}x (demo cases {row['demo_ratio_n1alt']:.2f}x)"
    )


# --- the stability proof ------------------------------------------------------------------


def stability_cost(rounds: int) -> dict[str, Any]:
    """Captures with and without the stability proof, interleaved, in one browser."""
    read = folder_reader(CASE / "sealed" / "reference")
    pts = points(load_yaml(Contract, CASE / "public" / "contract.yaml"))
    runs: dict[str, list[dict[str, float]]] = {"proved": [], "unproven": []}
    with open_browser() as browser:
        for point in pts:  # warm up
            proof_capture(browser, read, point, True)
        for index in range(rounds):
            ways = [True, False] if index % 2 == 0 else [False, True]
            for point in pts:
                for prove in ways:
                    runs["proved" if prove else "unproven"].append(
                        proof_capture(browser, read, point, prove)
                    )

    def mean(rows: list[dict[str, float]], key: str) -> float:
        return round(sum(r.get(key, 0.0) for r in rows) / len(rows), 1)

    out: dict[str, Any] = {"captures_each": len(runs["proved"])}
    for way, rows in runs.items():
        keys = ("wall", "screenshots", "settle_still", "pairs")
        out[way] = {key: mean(rows, key) for key in keys}
    out["ratio_wall"] = round(out["proved"]["wall"] / out["unproven"]["wall"], 3)
    out["proof_ms"] = round(out["proved"]["wall"] - out["unproven"]["wall"], 1)
    return out


def proof_capture(browser: Browser, read: Reader, point: Point, prove: bool) -> dict[str, float]:
    vp = point.viewport
    start = time.monotonic()
    shot = capture(browser, read, point.route, Viewport(vp.name, vp.width, vp.height), prove=prove)
    wall = (time.monotonic() - start) * 1000
    if shot.failure or not shot.stability.stable:
        raise SystemExit(f"{point.id}: capture failed: {shot.failure or shot.stability.describe()}")
    return {**shot.timings, "wall": wall, "pairs": float(shot.stability.pairs)}


# --- peak memory ------------------------------------------------------------------------


def tall_page(height: int) -> bytes:
    blocks = height // 200
    rows = "".join(
        f'<section style="height:200px;background:linear-gradient(90deg,hsl({i * 7 % 360} 60% 80%),'
        f'#fff)"><h2>Section {i}</h2><p>{"Lorem ipsum dolor sit amet. " * 12}</p></section>'
        for i in range(blocks)
    )
    html = f"<!doctype html><style>body{{margin:0;font:16px sans-serif}}</style>{rows}"
    return html.encode()


def descendants(root: int) -> list[int]:
    """``root`` and every process below it, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                stat = Path(entry.path, "stat").read_text()
            except OSError:
                continue  # exited meanwhile
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def tree_memory(root: int) -> tuple[int, int]:
    """(RSS, PSS) in bytes summed over ``root`` and its descendants. RSS counts pages
    shared between chromium's processes once per process; PSS splits them fairly."""
    rss = pss = 0
    for pid in descendants(root):
        try:
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
        except OSError:
            continue
        fields = {line.split(":")[0]: line.split()[1] for line in rollup[1:] if ":" in line}
        rss += int(fields.get("Rss", 0)) * 1024
        pss += int(fields.get("Pss", 0)) * 1024
    return rss, pss


class PeakSampler(threading.Thread):
    def __init__(self, every_s: float = 0.02) -> None:
        super().__init__(daemon=True)
        self.every_s = every_s
        self.peak_rss = self.peak_pss = 0
        self.samples = 0
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            rss, pss = tree_memory(os.getpid())
            self.peak_rss, self.peak_pss = max(self.peak_rss, rss), max(self.peak_pss, pss)
            self.samples += 1
            self._halt.wait(self.every_s)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def peak_memory(height: int) -> dict[str, Any]:
    body = tall_page(height)
    read: Reader = lambda rel: body if rel == "index.html" else None  # noqa: E731
    baseline = tree_memory(os.getpid())[0]
    sampler = PeakSampler()
    sampler.start()
    start = time.monotonic()
    with open_browser() as browser:
        shot = capture(browser, read, "/", Viewport("desktop", 1440, 900))
    seconds = time.monotonic() - start
    sampler.stop()

    size = Image.open(io.BytesIO(shot.full_png)).size
    return {
        "page_height_px": height,
        "full_png_size": list(size),
        "full_png_bytes": len(shot.full_png),
        "dom_elements": len(shot.dom),
        "failure": shot.failure,
        "seconds": round(seconds, 2),
        "baseline_mib": round(baseline / 2**20, 1),
        "peak_rss_mib": round(sampler.peak_rss / 2**20, 1),
        "peak_pss_mib": round(sampler.peak_pss / 2**20, 1),
        "samples": sampler.samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--per-browser", type=int, default=5, help="matrices per reused browser")
    parser.add_argument("--stability-rounds", type=int, default=8)
    parser.add_argument("--height", type=int, default=PAGE_HEIGHT)
    parser.add_argument("--only", choices=("throughput", "stability", "memory", "matrix"))
    parser.add_argument("--matrix-rounds", type=int, default=2)
    parser.add_argument("--matrix-repeat", type=int, default=2, help="each point per round")
    parser.add_argument("--matrix-cases", default="", help="comma-separated; default: all")
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/render_capture.json")
    args = parser.parse_args()

    report: dict[str, Any] = {
        "machine": {"cores": os.cpu_count(), "python": platform.python_version()},
        "browser": browser_version(),
        "recon": str(Path(recon.__file__).parent),  # which checkout was measured
    }
    if args.only in (None, "throughput"):
        report.update(throughput_report(args.rounds, args.per_browser))
    if args.only in (None, "stability"):
        report["stability"] = stability_cost(args.stability_rounds)
        print_stability(report["stability"])
    if args.only in (None, "matrix"):
        only = [c for c in args.matrix_cases.split(",") if c]
        report["matrix"] = matrix(args.matrix_rounds, args.matrix_repeat, only)
        print_matrix(report["matrix"])
    if args.only in (None, "memory"):
        report["memory"] = peak_memory(args.height)
        print_memory(report["memory"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


def throughput_report(rounds: int, per_browser: int) -> dict[str, Any]:
    tallies = throughput(rounds, per_browser)
    rates = {
        name: {
            **asdict(t),
            "captures_per_s": round(t.captures / t.wall, 3),
            "captures_per_cpu_s": round(t.captures / t.cpu, 3),
        }
        for name, t in tallies.items()
    }
    phases = {
        name: tallies[name].mean_phases_ms(tallies[name].wall * 1000)
        for name in ("reuse", "launch")
    }
    for row in rates.values():
        del row["capture_ms"], row["phases_ms"]
    ratio_cpu = rates["reuse"]["captures_per_cpu_s"] / rates["launch"]["captures_per_cpu_s"]
    ratio_wall = rates["reuse"]["captures_per_s"] / rates["launch"]["captures_per_s"]
    floor = rates["bare"]["captures_per_s"] / rates["launch"]["captures_per_s"]
    print(f"{'way':8} {'captures':>8} {'wall s':>8} {'cpu s':>8} {'per s':>8} {'per cpu-s':>10}")
    for name, row in rates.items():
        print(
            f"{name:8} {row['captures']:8d} {row['wall']:8.2f} {row['cpu']:8.2f} "
            f"{row['captures_per_s']:8.3f} {row['captures_per_cpu_s']:10.3f}"
        )
    print(f"reuse / launch: {ratio_cpu:.2f}x per CPU-second, {ratio_wall:.2f}x per wall second")
    print(f"bare / launch: {floor:.2f}x per wall second (no harness work at all)")
    for name, row in phases.items():
        print(f"{name} ms per capture: " + ", ".join(f"{k} {v:.0f}" for k, v in row.items()))
    return {
        "rounds": rounds,
        "per_browser": per_browser,
        "throughput": rates,
        "ratio_per_cpu_s": round(ratio_cpu, 2),
        "ratio_per_wall_s": round(ratio_wall, 2),
        "bare_over_launch_per_wall_s": round(floor, 2),
        "phases_ms_per_capture": phases,
    }


def print_stability(row: dict[str, Any]) -> None:
    proved, unproven = row["proved"], row["unproven"]
    print(
        f"stability proof: {proved['wall']:.0f} ms per capture with it, "
        f"{unproven['wall']:.0f} ms without ({row['ratio_wall']:.2f}x, "
        f"+{row['proof_ms']:.0f} ms; screenshots {proved['screenshots']:.0f} vs "
        f"{unproven['screenshots']:.0f} ms; settling until still {proved['settle_still']:.0f} ms; "
        f"{proved['pairs']:.1f} pairs of stills per proof; {row['captures_each']} captures each)"
    )


def print_memory(memory: dict[str, Any]) -> None:
    print(
        f"{memory['page_height_px']} px page: peak {memory['peak_pss_mib']} MiB PSS, "
        f"{memory['peak_rss_mib']} MiB RSS (python + driver + chromium; "
        f"{memory['baseline_mib']} MiB before launch), "
        f"full PNG {memory['full_png_size'][0]}x{memory['full_png_size'][1]}, "
        f"{memory['seconds']} s" + (f"; FAILED: {memory['failure']}" if memory["failure"] else "")
    )


if __name__ == "__main__":
    main()
