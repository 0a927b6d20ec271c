"""The attempt cell: one production run of one entry on one case (DESIGN §4, §7).

Reads: ``workspace.workspace`` and ``image.image``; its key also holds the entry's and the
protocol's digests and the attempt index, and no harness code (the kind is code-free, so
no harness change re-runs an agent). Writes:

- ``record``: the :class:`~recon.model.AttemptRecord` (what the run produced: outcome,
  reason, exit code, trace counts, refusals, egress counts; and the conditions it ran
  under: protocol, protocol digest, image, entry digest, evidence condition);
- ``build``: the build output tree, only when the attempt is valid, the one output the
  render and grade cells read, so a re-run with identical output re-renders nothing
  (an invalid attempt's output, if any, is kept as ``partial``);
- ``run``: the :class:`~recon.model.RunRecord`, run metadata (duration, logs, engine image
  id, egress event log), kept out of every key and of the manifest's cells;
- ``gateway``: for an entry whose agent goes through the model gateway (``agent.gateway``),
  the gateway's :class:`~recon.model.gateway.Recording` (every exchange, with timings): run
  metadata too, like ``run``. What it metered (calls, tokens by kind, cost) is the record's
  ``model_use``; the pinned price table's digest is the cell's ``prices`` parameter, so it
  is in the key of gateway attempts only (other attempts' keys do not move). A spent model
  budget is a ``timeout`` whose reason starts ``model budget:`` (DESIGN §7, the time
  limit's row: kept, excluded, not retried).

Whatever a backend raises becomes a record: a :class:`~recon.errors.ReconError` is the
harness's failure (retried); anything else is a harness bug, a harness failure whose
reason names the exception. No exception leaves the cell after the backend returns either:
a build output the store cannot hold (``TreeRefused``, naming the path) makes the attempt
``ungradeable``; any other failure to store it or to write the record is the harness's.
What the Candidate may leave in its output is decided by the backends (``outputs.py``);
the store's refusal is the defence in depth.

``recon replay`` (:mod:`recon.pipeline.replay`) runs an attempt again with
:func:`run_attempt`, its model calls answered from its recording: no record, no pointer.

Retries (DESIGN §7): a harness failure leaves its pointer marked ``retry`` and no action
record, so the next build runs the attempt again under the same key. Each try is its
own immutable record, ``try_index`` counting the tries and ``retry_of`` naming the record
it replaces. After ``protocol.retry.harness_failure`` retries the last failure is final:
recorded under the key, it stays a harness failure until an input of the attempt changes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from requests.exceptions import RequestException

from recon.agents import CommandAdapter, not_started
from recon.agents.gateway import gateway_plan, uses_gateway
from recon.agents.scripted import SCRIPTED, ModelServers
from recon.errors import HarnessError, ReconError
from recon.gateway.turns import reply
from recon.model import AttemptRecord, Egress, Entry, ModelUse, Ref, RunRecord
from recon.model.gateway import Recording
from recon.pipeline.keys import cell_key
from recon.pipeline.kinds._base import Produced, blob, tree
from recon.sandbox import (
    AttemptRun,
    DockerRun,
    container_placeholders,
    default_recipe,
    ensure_image,
    entry_mount,
    harness_bug,
    run_docker,
    run_native,
)
from recon.sandbox.deps import require as require_deps
from recon.store import DiskFull, TreeRefused, checkout_tree, put_tree, space_for

if TYPE_CHECKING:
    from recon.pipeline.runtime import Cell, Runtime


def attempt(rt: Runtime, cell: Cell, inputs: dict[str, str]) -> Produced:
    run, build = run_attempt(rt, cell, inputs)
    try:
        with space_for(rt.project.store_root):
            return _produced(rt, cell, inputs, run, build)
    except DiskFull:
        raise  # the store's disk, not the attempt's: the build stops with one error
    except Exception as err:  # a record that cannot be written: the harness's, retried
        return _produced(rt, cell, inputs, not_started(_harness_reason(err)), None)


def run_attempt(
    rt: Runtime, cell: Cell, inputs: dict[str, str], replay: Recording | None = None
) -> tuple[AttemptRun, str | None]:
    """The backend's run and its build output stored in ``rt.store`` (no record, no
    pointer). ``replay`` answers the model calls from that recording (``recon replay``)."""
    entry = rt.project.entries[cell.params["entry"]]
    # What the Candidate left in the workspace never fails the cell when it is removed.
    with tempfile.TemporaryDirectory(prefix="recon-attempt-", ignore_cleanup_errors=True) as tmp:
        work = Path(tmp) / "workspace"
        checkout_tree(rt.store, inputs["workspace.workspace"], work)
        run = _run(rt, cell, entry, work, Path(tmp) / "build", replay)
        return _store_build(rt, run)


def _store_build(rt: Runtime, run: AttemptRun) -> tuple[AttemptRun, str | None]:
    """The run and its stored build output. An output the store refuses (the path named)
    makes a valid attempt ``ungradeable``; a store that fails is a harness failure, but a
    full disk under the store stops the build (:class:`DiskFull`, one error naming it)."""
    if run.output is None:
        return run, None
    try:
        with space_for(rt.project.store_root):
            return run, put_tree(rt.store, run.output)
    except TreeRefused as err:
        refusal = f"{_printable(err.path, run.output)}: {err.why}"
        kept = dataclasses.replace(run, output=None, refusals=[*run.refusals, refusal])
        if run.outcome != "valid":  # a partial output: dropped, the record stands
            return kept, None
        why = f"the build output was refused: {refusal}"
        return dataclasses.replace(kept, outcome="ungradeable", reason=why), None
    except DiskFull:
        raise
    except Exception as err:
        why = _harness_reason(err, "storing the build output failed: ")
        return dataclasses.replace(run, outcome="harness_failure", reason=why, output=None), None


def _printable(path: Path, root: Path) -> str:
    """``path`` relative to the output folder, bytes that are not UTF-8 escaped."""
    rel = path.relative_to(root) if path.is_relative_to(root) else path
    return os.fsencode(rel).decode("utf-8", "backslashreplace")


def _harness_reason(err: Exception, doing: str = "") -> str:
    if isinstance(err, (ReconError, OSError)):
        return f"harness: {doing}{err}"[:600]
    return harness_bug(err)


def attempt_lost(rt: Runtime, cell: Cell, inputs: dict[str, str], reason: str) -> Produced:
    """The try of an attempt whose worker or node was lost before it answered: a harness
    failure with ``reason``, retried per protocol like any other."""
    return _produced(rt, cell, inputs, not_started(reason), None)


def _produced(
    rt: Runtime, cell: Cell, inputs: dict[str, str], run: AttemptRun, build: str | None
) -> Produced:
    """The try's record, run metadata and build; ``retry`` while the protocol allows one."""
    p = cell.params
    entry = rt.project.entries[p["entry"]]
    loaded = rt.project.cases[p["case"]]
    protocol = rt.project.release(cell.context["release"]).protocol
    previous = _previous_try(rt, cell, inputs)
    try_index = 0 if previous is None else previous[1].try_index + 1
    failed = run.outcome == "harness_failure"
    retry = failed and try_index < protocol.retry.harness_failure
    reason = run.reason
    if failed and not retry:
        reason += f" (final: {try_index} retries, protocol.retry.harness_failure)"
    extra: dict[str, Any] = {"refusals": run.refusals}
    meta: dict[str, Any] = {}
    outputs: dict[str, Ref] = {}
    if isinstance(run, DockerRun):
        counts = {k: run.egress.get(k, 0) for k in ("allowed", "refused", "failed")}
        extra["egress"] = Egress(**counts)
        meta = {
            "image_id": run.image_id or None,
            "egress_events": rt.store.put_json(run.egress.get("events", [])),
        }
        if run.gateway is not None:
            extra["model_use"] = _model_use(run.gateway)
            outputs["gateway"] = blob(rt.store, run.gateway.model_dump(mode="json"))
    record = AttemptRecord(
        entry=entry.id,
        case=loaded.id,
        index=p["index"],
        protocol=protocol.name,
        backend=protocol.backend,
        formal=protocol.backend == "docker",
        outcome=run.outcome,
        reason=reason,
        exit_code=run.exit_code,
        image=inputs["image.image"],
        trace=run.trace,
        try_index=try_index,
        retry_of=previous[0] if previous is not None else None,
        protocol_digest=p["protocol"],
        entry_digest=p["entry_digest"],
        evidence_condition=entry.evidence_condition,
        **extra,
    )
    ran = RunRecord(duration_s=run.duration_s, logs=rt.store.put_bytes(run.logs), **meta)
    outputs["record"] = blob(rt.store, record.model_dump(mode="json"))
    outputs["run"] = blob(rt.store, ran.model_dump(mode="json"))
    if build is not None:  # an invalid attempt's output is kept, never rendered
        outputs["build" if run.outcome == "valid" else "partial"] = tree(build)
    return Produced(outputs, retry=retry)


def _model_use(recording: Recording) -> ModelUse:
    """The record's counts, from the recording alone: calls answered, the turns among them
    (calls that generate), the tool calls their replies hold, tokens and cost."""
    usage = recording.usage
    answered = [e for e in recording.exchanges if e.refused is None]
    turns = [e for e in answered if e.endpoint == "generate"]
    return ModelUse(
        calls=len(answered),
        usage=usage,
        tokens=usage.tokens,
        cost_usd=recording.cost_usd,
        turns=len(turns),
        tool_calls=sum(len(reply(e.protocol, e.message).calls) for e in turns),
        prices=recording.prices_digest,
    )


def _previous_try(
    rt: Runtime, cell: Cell, inputs: dict[str, str]
) -> tuple[str, AttemptRecord] | None:
    """The harness-failed try this run replaces: the cell's pointer, when it is marked
    ``retry`` under the same key (same workspace, entry, protocol, image and index)."""
    pointer = rt.read_pointer(cell)
    key = cell_key(cell.kind, rt.code(cell.kind), inputs, cell.params)
    if pointer is None or not pointer.retry or pointer.key != key:
        return None
    digest = pointer.outputs["record"].digest
    return digest, AttemptRecord.model_validate(rt.store.read_json(digest))


def _run(
    rt: Runtime, cell: Cell, entry: Entry, work: Path, out: Path, replay: Recording | None = None
) -> AttemptRun:
    """The backend's run; every exception becomes a harness failure with its reason."""
    try:
        # A scripted model (provider `scripted`) is served for the run, its key the credential;
        # through the gateway, the gateway answers for it instead.
        serving: contextlib.AbstractContextManager[Mapping[str, str]] = (
            contextlib.nullcontext({})
            if uses_gateway(entry)
            else rt.shared(ModelServers).serving(entry, rt.project.entries_dir)
        )
        with serving as issued:
            return _start(rt, cell, entry, work, out, {**os.environ, **issued}, replay)
    except ReconError as err:
        return not_started(f"harness: {err}")
    except (RequestException, OSError) as err:  # the engine or host went away mid-request
        where = "docker engine" if entry.sandbox.backend == "docker" else "host"
        return not_started(f"harness: {where} not answering ({type(err).__name__}: {err})"[:600])
    except Exception as err:  # a harness bug: recorded and retried, never scored
        return not_started(f"harness bug: {type(err).__name__}: {err}")


def _start(
    rt: Runtime,
    cell: Cell,
    entry: Entry,
    work: Path,
    out: Path,
    environ: Mapping[str, str],
    replay: Recording | None,
) -> AttemptRun:
    # Credentials first: missing ones are the harness's failure, before anything starts
    # (a replay needs none: the recording answers, the sandbox gets the token).
    # Through the gateway the scripted model takes no key: its credentials get the token.
    missing = CommandAdapter(entry.agent).credentials_reason(entry.id, environ)
    scripted = uses_gateway(entry) and entry.model.provider == SCRIPTED
    if missing is not None and replay is None and not scripted:
        return not_started(missing)
    loaded = rt.project.cases[cell.params["case"]]
    protocol = rt.project.release(cell.context["release"]).protocol
    if protocol.backend == "docker":
        sealed = [rt.project.sealed_dir(loaded.id)]
        limit = protocol.time_limit_s
        return _docker(rt, entry, loaded.contract.build, limit, work, out, sealed, environ, replay)
    limit = protocol.time_limit_s
    return run_native(work, entry, rt.project.entries_dir, loaded.contract, limit, out=out)


def _docker(
    rt: Runtime,
    entry: Entry,
    build: Any,
    time_limit_s: int,
    work: Path,
    out: Path,
    sealed: list[Path],
    environ: Mapping[str, str],
    replay: Recording | None = None,
) -> AttemptRun:
    """One formal attempt. A missing image is rebuilt (a cache hit when the tag exists);
    engine trouble comes back from ``run_docker`` as a harness failure, retried next build.
    The offline dependency store must have been fetched (``recon deps fetch``)."""
    try:
        deps = require_deps(rt.project.deps_root)
    except HarnessError as err:
        return not_started(f"harness: {err}")
    try:
        where = rt.project
        tag = ensure_image(deps_root=where.deps_root, cache_dir=where.settings.apt_cache).tag
    except HarnessError:
        tag = default_recipe().tag  # run_docker reports the engine or image as missing
    adapter = CommandAdapter(entry.agent)
    limit = min(time_limit_s, entry.budget.wall_s)
    agent = adapter.prepare(container_placeholders(limit), environ)
    gateway = (
        gateway_plan(entry, rt.project.entries_dir, environ, replay, rt.project.live)
        if uses_gateway(entry)
        else None
    )
    run = run_docker(
        work, agent.command, entry.budget, time_limit_s, tag,
        build=build, out=out, egress=entry.sandbox.egress, env=agent.env,
        secrets=agent.secrets, sealed=sealed, deps=deps, trace_file=agent.trace_file,
        mounts=[entry_mount(rt.project.entries_dir, entry, out.parent / "entry")],
        gateway=gateway,
    )  # fmt: skip
    run.trace = adapter.trace(run.logs, run.trace_file)
    return run
