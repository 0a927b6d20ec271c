"""Showing a build's progress: the doit reporter that feeds :class:`Tracker`, a plain line
log (CI, pipes: ``progress=plain``) and a live rich view (a terminal: ``progress=rich``).

The plain log keeps every line doit and the cells print (``.  <task>``,
``[recon] ran|reused <cell>``) and adds, after each cell that ran, was reused or failed::

    [recon] progress demo  done 12/71 (ran 8, reused 2, up to date 2)  running 2  failed 0
        0.42 cells/s  eta 2m10s        (on one line)

(``  lost 1 (resubmitted 1)`` after ``failed`` once a worker or node died under a cell),
and, when the run ends, the summary ``recon status`` prints (:func:`summary`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from doit.exceptions import TaskFailed, UnmetDependency
from doit.reporter import ConsoleReporter

from recon.errors import EXIT_BAD_INPUT, EXIT_NO_RESOURCES, ConfigError, ReconError
from recon.model import BuildProgress, FailedCell
from recon.pipeline.progress import Build, Tracker
from recon.pipeline.waiting import shown

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell

VIEWS = ("auto", "plain", "rich")


def choose_view(asked: str | None) -> str:
    """``auto`` is rich on a terminal, plain elsewhere."""
    view = asked or "auto"
    if view not in VIEWS:
        raise ConfigError(
            f"progress={view}: unknown progress view (choose from {', '.join(VIEWS)})"
        )
    if view == "auto":
        return "rich" if sys.stderr.isatty() else "plain"
    return view


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


def line(snap: BuildProgress) -> str:
    """One progress line of a snapshot."""
    t = snap.totals()
    lost = f"  lost {t.lost} (resubmitted {t.resubmitted})" if t.lost else ""
    lost += f"  waiting for resources {len(snap.waiting)}" if snap.waiting else ""
    return (
        f"[recon] progress {snap.release}  done {t.done}/{t.total} (ran {t.ran}, reused "
        f"{t.reused}, up to date {t.uptodate})  running {t.running}  failed {t.failed}{lost}  "
        f"{snap.rate:.2f} cells/s  eta {eta(snap)}"
    )


def eta(snap: BuildProgress) -> str:
    """The estimate; none while a cell waits for resources (it may never get them)."""
    if snap.finished:
        return duration(0)
    return "none (waiting for resources)" if snap.waiting else duration(snap.eta_s)


def waiting(snap: BuildProgress) -> list[str]:
    """``waiting for resources: <cell>: needs {…}; the cluster offers {…} on N node(s)``,
    one line per cell no live node can run."""
    return [
        f"waiting for resources: {cell}: needs {shown(w.needs)}; the cluster offers "
        f"{shown(w.offers)} on {w.nodes} node(s)"
        for cell, w in snap.waiting.items()
    ]


def losses(snap: BuildProgress) -> str | None:
    """``lost 2 (resubmitted 2): attempt 1 (resubmitted 1), capture 1 (resubmitted 1)``:
    the cells whose worker or node died, by kind; None when none did."""
    t = snap.totals()
    if not t.lost:
        return None
    kinds = ", ".join(
        f"{kind} {c.lost} (resubmitted {c.resubmitted})" for kind, c in snap.kinds.items() if c.lost
    )
    return f"lost {t.lost} (resubmitted {t.resubmitted}): {kinds}"


def summary(snap: BuildProgress) -> list[str]:
    """The table ``recon status`` prints and a plain build ends with."""
    rows = [f"{'kind':<10}{'total':>7}{'done':>7}{'ran':>7}{'reused':>8}{'uptodate':>10}"
            f"{'running':>9}{'failed':>8}{'pending':>9}{'mean s':>8}"]  # fmt: skip
    for kind, c in [*snap.kinds.items(), ("all", snap.totals())]:
        mean = f"{c.seconds / c.ran:.2f}" if c.ran else "-"
        rows.append(
            f"{kind:<10}{c.total:>7}{c.done:>7}{c.ran:>7}{c.reused:>8}{c.uptodate:>10}"
            f"{c.running:>9}{c.failed:>8}{c.pending:>9}{mean:>8}"
        )
    if snap.entries:
        rows.append("attempts by entry:")
        for entry, a in snap.entries.items():
            outcomes = ", ".join(f"{k} {v}" for k, v in a.outcomes.items()) or "none finished"
            rows.append(
                f"  {entry}: {outcomes}; running {a.running}, failed {a.failed}, "
                f"pending {a.pending} (of {a.total})"
            )
    lost = losses(snap)
    if lost is not None:
        rows.append(f"workers lost under cells: {lost}")
    rows += waiting(snap)
    state = "finished" if snap.finished else "running"
    if snap.finished:
        state += ", ok" if snap.ok else ", with failures"
    rows.append(
        f"{state}; executor {snap.executor}; {snap.rate:.2f} cells/s; up to "
        f"{snap.concurrency} at once; eta {eta(snap)}"
    )
    return rows


class CellFailed(TaskFailed):
    """A cell's failure as doit sees it, with the exit code its error asks of the build."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code

    @classmethod
    def of(cls, cell: str, err: ReconError) -> CellFailed:
        return cls(f"{cell}: {err}", err.exit_code)


STOP_CODES = (EXIT_NO_RESOURCES, EXIT_BAD_INPUT)
"""The exit codes a failed cell ends the build with, instead of doit's own (1): a cluster
that cannot run it (75), bad input only found when the cell runs, such as a Ray address no
cluster answers on (2)."""


class _Stdout:
    """Writes to whatever ``sys.stdout`` is at the time (rich's proxy while live)."""

    def write(self, text: str) -> None:
        sys.stdout.write(text)
        sys.stdout.flush()


class ProgressReporter(ConsoleReporter):
    """doit's console reporter, plus progress: up-to-date and failed cells go to the tracker,
    which the cells themselves tell when they start and finish."""

    desc = "console output plus recon's build progress"

    def __init__(self, tracker: Tracker, cells: dict[str, Cell], releases: dict[str, Any],
                 view: str, rt: Any,
                 on_success: Callable[[list[str], bool], None] | None = None,
                 on_failure: Callable[[dict[str, list[FailedCell]]], None] | None = None,
                 ) -> None:  # fmt: skip
        super().__init__(_Stdout(), {})
        self.rt = rt
        self.on_success = on_success  # told the releases built (and whether a task ran)
        self.on_failure = on_failure  # told each release's failed cells, when any failed
        self.failed_cells: list[FailedCell] = []
        self.lazy: Callable[[], bool] = lambda: False  # were the cells left unvisited?
        self.executed = False
        self.tracker = tracker
        self.cells = cells  # cell id -> cell
        self.releases = releases  # release id -> its cells
        self.view = view
        self.live: Any = None
        self.failed = False
        self.stop_code: int | None = None  # the exit code a failed cell asked for
        self.stopped: list[str] = []  # and why (said last: doit's own report may be lost)

    def initialize(self, tasks: Any, selected_tasks: Any) -> None:
        for name in selected_tasks:
            rid = name.removeprefix("release:")
            if name.startswith("release:") and rid in self.releases:
                self.tracker.track(rid, self.releases[rid])
        if self.view == "plain":
            self.tracker.listeners.append(_plain)
        elif self.tracker.builds:
            self.live = _start_live(self.tracker)

    def execute_task(self, task: Any) -> None:
        self.executed = True
        super().execute_task(task)

    def skip_uptodate(self, task: Any) -> None:
        super().skip_uptodate(task)
        cell = self.cells.get(task.name)
        if cell is not None:
            self.tracker.finished(cell, "uptodate", 0.0, self.rt)
        rid = task.name.removeprefix("release:")
        if self.lazy() and task.name.startswith("release:") and rid in self.releases:
            self.tracker.all_uptodate(rid, self.releases[rid])

    def add_failure(self, task: Any, fail: Any) -> None:
        self.failed = True
        if not isinstance(fail, UnmetDependency):  # its cause is reported on its own
            self.failed_cells.append(FailedCell(cell=task.name, error=error_line(fail)))
        if getattr(fail, "exit_code", None) in STOP_CODES:
            self.stop_code = fail.exit_code
            why = first_line(fail.message, limit=2000)
            if not any(said.endswith(why.split(": ", 1)[-1]) for said in self.stopped):
                self.stopped.append(why)  # one cell says it, not each that met it
        cell = self.cells.get(task.name)
        if cell is not None:
            self.tracker.failed(cell)
        super().add_failure(task, fail)

    def runtime_error(self, msg: str) -> None:
        self.failed = True
        self.failed_cells.append(FailedCell(cell="doit", error=first_line(msg)))
        super().runtime_error(msg)

    def complete_run(self) -> None:
        # doit reports from a ``finally``: on ^C the interrupt is still in flight, and the
        # build is not finished, so its snapshot stays unfinished (status: "interrupted")
        interrupted = isinstance(sys.exc_info()[1], KeyboardInterrupt)
        if interrupted:
            self.tracker.interrupted()
        else:
            self.tracker.complete(ok=not self.failed)
        if self.live is not None:
            self.live.stop()
        super().complete_run()
        for build in self.tracker.builds:
            text = "\n".join(summary(build.snapshot()))
            sys.stderr.write(f"[recon] summary {build.release}\n{text}\n")
        sys.stderr.flush()
        built = [] if interrupted else [b.release for b in self.tracker.builds]
        if self.on_success is not None and not self.failed and built:
            self.on_success(built, self.executed)
        if self.on_failure is not None and self.failed and built:
            self.on_failure(self.failed_by_release(built))
        if self.stop_code is not None:
            for why in self.stopped:
                sys.stderr.write(f"[recon] stopped: {why}\n")
            sys.stderr.flush()
            raise SystemExit(self.stop_code)  # doit's runner has closed its state by now

    def failed_by_release(self, built: list[str]) -> dict[str, list[FailedCell]]:
        """Each release built, with its cells (or its ``release:<id>`` task) that failed; a
        failure doit names no task for (a runtime error) counts for every release."""
        found: dict[str, list[FailedCell]] = {}
        for rid in built:
            mine = {c.id for c in self.releases.get(rid, [])} | {f"release:{rid}", "doit"}
            failed = [f for f in self.failed_cells if f.cell in mine]
            if failed:
                found[rid] = failed
        return found


def error_line(fail: Any) -> str:
    """What failed, in one line: the exception a traceback ends with, else the message."""
    trace = "".join(getattr(fail, "traceback", "") or "")
    return first_line(trace.strip().splitlines()[-1] if trace.strip() else fail.message)


def first_line(text: str, limit: int = 500) -> str:
    """The first non-blank line of an error message, at most ``limit`` characters."""
    lines = [ln.strip() for ln in str(text).splitlines() if ln.strip()]
    found = lines[0] if lines else "(no message)"
    return found if len(found) <= limit else found[: limit - 1] + "…"


def _plain(build: Build, what: str) -> None:
    if what in ("ran", "reused", "failed"):
        sys.stderr.write(line(build.snapshot()) + "\n")
        sys.stderr.flush()


def _start_live(tracker: Tracker) -> Any:
    from rich.console import Console, Group
    from rich.live import Live

    def render() -> Any:
        return Group(*[rich_table(snap) for snap in tracker.snapshots()])

    # The console writes to the terminal's stderr itself, never to whatever sys.stderr is
    # later: doit swaps in its own writer while an action runs, which would loop back here.
    console = Console(file=sys.stderr)
    live = Live(get_renderable=render, console=console, refresh_per_second=4,
                redirect_stdout=True, redirect_stderr=True, transient=True)  # fmt: skip
    live.start()
    return live


def rich_table(snap: BuildProgress) -> Any:
    from rich.table import Table

    table = Table(title=f"release {snap.release} ({snap.executor})", expand=False)
    for name in ("kind", "total", "done", "ran", "reused", "up to date", "running", "failed"):
        table.add_column(name, justify="left" if name == "kind" else "right")
    for kind, c in [*snap.kinds.items(), ("all", snap.totals())]:
        table.add_row(kind, *map(str, (c.total, c.done, c.ran, c.reused, c.uptodate,
                                       c.running, c.failed)))  # fmt: skip
    for entry, a in snap.entries.items():
        outcomes = ", ".join(f"{k} {v}" for k, v in a.outcomes.items()) or "-"
        table.add_row(f"[dim]{entry}[/]", str(a.total), outcomes, "", "", "",
                      str(a.running), str(a.failed))  # fmt: skip
    lost = losses(snap)
    table.caption = f"{snap.rate:.2f} cells/s · eta {eta(snap)}"
    if lost is not None:
        table.caption += f" · {lost}"
    for row in waiting(snap):
        table.caption += f"\n{row}"
    return table
