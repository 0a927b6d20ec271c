"""``recon replay``: re-run a recorded attempt offline and compare its build output.

An attempt whose agent went through the model gateway keeps the gateway's recording (its
run-metadata output ``gateway``). A replay runs that attempt again, on the same backend
from the same inputs (workspace, entry, protocol, image, index: the attempt's key must be
the one recorded), with the recording answering every model call in order
(:class:`~recon.gateway.ReplayUpstream`): no model host, no key. A call that no longer
fits the recording (another model or endpoint, another turn, more calls), or fewer calls
than recorded, is the replay's harness failure naming the turn.

The replay writes into a scratch store that reads through to the project's
(:class:`~recon.pipeline.check.ScratchStore`) and is removed afterwards: an attempt is
immutable (DESIGN §2), so its pointer, action record and outputs are never touched, and a
replay is a check of the attempt, not a second try of it (``--out`` keeps the replayed
build output in a folder for a look).

What is decided (which attempt, whether it can be replayed, how the two runs compare) is
pure over records and file listings; running and storing are at the edge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from recon.errors import ConfigError
from recon.model import AttemptRecord, Outcome, Pointer
from recon.model.gateway import Recording
from recon.pipeline.cells import input_digests
from recon.pipeline.check import scratch_runtime
from recon.pipeline.keys import cell_key
from recon.pipeline.runtime import Cell, Runtime, walk
from recon.store import Store, checkout_tree, tree_files

Verdict = Literal["identical", "different", "harness_failure"]
EXIT_IDENTICAL = 0
EXIT_DIFFERENT = 1
EXIT_HARNESS = 3
EXITS: dict[Verdict, int] = {
    "identical": EXIT_IDENTICAL,
    "different": EXIT_DIFFERENT,
    "harness_failure": EXIT_HARNESS,
}
"""``recon replay``'s exit codes; 2 is bad input, as for every command."""


@dataclass(frozen=True)
class Side:
    """One run of the attempt: its outcome and reason, its output tree (``build`` when
    valid, else ``partial``, or None) and the model calls its gateway answered."""

    outcome: Outcome
    reason: str
    tree: str | None
    calls: int


@dataclass(frozen=True)
class Replayed:
    verdict: Verdict
    line: str
    files: list[str] = field(default_factory=list)
    """The paths whose bytes differ (or that only one side holds), sorted."""


def find_cell(root: Cell, attempt: str) -> Cell:
    """The attempt cell named ``attempt`` upstream of a release's root."""
    for cell in walk([root]):
        if cell.kind == "attempt" and cell.name == attempt:
            return cell
    raise ConfigError(f"{attempt}: not in the release's build graph; check the id")


def recorded(rt: Runtime, cell: Cell) -> tuple[dict[str, str], Side, Recording]:
    """The attempt's inputs, its recorded run and its gateway recording; a
    :class:`ConfigError` when it has none to replay or was recorded under other inputs."""
    pointer = rt.read_pointer(cell)
    build = f"`doit release:{cell.context['release']}`"
    if pointer is not None and pointer.retry:
        raise ConfigError(
            f"{cell.name}: its last try was a harness failure, to be retried; run {build} first"
        )
    if pointer is None or not rt.cache.has(pointer.key):
        raise ConfigError(f"{cell.name}: not built yet; run {build} first")
    if "gateway" not in pointer.outputs:
        raise ConfigError(
            f"{cell.name}: no gateway recording to replay (only an entry with agent.gateway, "
            "on the docker backend, records its model calls)"
        )
    try:
        inputs = input_digests(rt, cell, _recorded)
    except LookupError as missing:
        raise ConfigError(f"{cell.name}: its input {missing} is not built") from None
    if cell_key(cell.kind, rt.code(cell.kind), inputs, cell.params) != pointer.key:
        raise ConfigError(
            f"{cell.name}: its inputs (workspace, entry, protocol, image) changed since it "
            f"was recorded; rebuild it with {build} first"
        )
    record = AttemptRecord.model_validate(rt.store.read_json(pointer.outputs["record"].digest))
    recording = Recording.model_validate(rt.store.read_json(pointer.outputs["gateway"].digest))
    return inputs, _side(record, pointer, recording), recording


def _recorded(rt: Runtime, cell: Cell) -> Pointer:
    """An upstream pointer as recorded: a replay runs or heals nothing upstream."""
    pointer = rt.read_pointer(cell)
    if pointer is None:
        raise LookupError(cell.id)
    return pointer


def _side(record: AttemptRecord, pointer: Pointer, recording: Recording) -> Side:
    tree = pointer.outputs.get("build") or pointer.outputs.get("partial")
    digest = tree.digest if tree is not None else None
    return Side(record.outcome, record.reason, digest, answered(recording))


def answered(recording: Recording | None) -> int:
    """The calls the upstream answered: what a replay of ``recording`` can answer."""
    if recording is None:
        return 0
    return sum(1 for e in recording.exchanges if e.refused is None and e.tries)


def replay(
    rt: Runtime, cell: Cell, inputs: dict[str, str], recording: Recording
) -> tuple[Side, Store]:
    """Run the attempt again answered by ``recording``: the replayed side, and the
    scratch store holding its output (valid until ``rt`` is closed)."""
    from recon.pipeline.kinds.attempt import run_attempt
    from recon.sandbox import DockerRun

    run, tree = run_attempt(rt, cell, inputs, replay=recording)
    calls = answered(run.gateway) if isinstance(run, DockerRun) else 0
    return Side(run.outcome, run.reason, tree, calls), rt.store


def compare(
    before: Side,
    after: Side,
    files: tuple[Mapping[str, str], Mapping[str, str]] | None = None,
) -> Replayed:
    """How the replay compares with the recorded run; ``files`` lists both trees
    (path -> digest) when they differ."""
    if after.outcome == "harness_failure":
        return Replayed("harness_failure", f"harness failure: {_bare(after.reason)}")
    if after.calls < before.calls:
        turn = after.calls + 1
        return Replayed(
            "harness_failure",
            f"harness failure: gateway: replay: turn {turn}: the agent stopped after "
            f"{after.calls} call(s); the recording holds {before.calls}",
        )
    if after.outcome != before.outcome:
        return Replayed(
            "different",
            f"different outcome: recorded {before.outcome}, replayed {after.outcome} "
            f"({after.reason})",
        )
    what = "build" if before.outcome == "valid" else f"{before.outcome} output"
    if after.tree == before.tree:
        return Replayed("identical", f"identical {what} {before.tree or '(none)'}")
    paths = differing(*files) if files is not None else []
    return Replayed(
        "different",
        f"different {what}: {len(paths)} file(s) differ (recorded "
        f"{_short(before.tree)}, replayed {_short(after.tree)})",
        paths,
    )


def differing(old: Mapping[str, str], new: Mapping[str, str]) -> list[str]:
    """The paths whose digests differ between two listings, or that one of them lacks."""
    return sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))


def listing(store: Store, tree: str | None) -> dict[str, str]:
    """A build output tree as path -> digest (empty for no tree)."""
    if tree is None:
        return {}
    return {path: found.digest for path, found in tree_files(store, tree).items()}


def _bare(reason: str) -> str:
    return reason.removeprefix("harness: ")


def _short(tree: str | None) -> str:
    return tree[:12] if tree else "none"


def replay_attempt(
    rt: Runtime, cell: Cell, out: Path | None = None, note: Callable[[str], object] = print
) -> Replayed:
    """Load, replay and compare one attempt; ``out`` gets the replayed output tree,
    ``note`` a line saying what is replayed before it runs."""
    inputs, before, recording = recorded(rt, cell)
    note(
        f"replaying {cell.name}: recorded {before.outcome}, {before.calls} model call(s) "
        "answered from the recording, offline"
    )
    with scratch_runtime(rt, prefix="recon-replay-") as again:
        after, store = replay(again, cell, inputs, recording)
        files = None
        if after.tree != before.tree:
            files = (listing(store, before.tree), listing(store, after.tree))
        if out is not None and after.tree is not None:
            checkout_tree(store, after.tree, out)
    return compare(before, after, files)
