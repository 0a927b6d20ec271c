"""Model gateway overhead: the latency one call gains by going through the gateway.

Two columns against the same scripted model server (``recon.gateway.serve_scripted``, in a
process of its own), measured in the same run and interleaved round by round:

- ``direct``: the client posts to the scripted model itself, the baseline;
- ``gateway``: the client posts to an attempt's gateway (``serve_gateway``, in this
  process, one loop thread per gateway, as the harness runs them), which authenticates
  the token, forwards over HTTP with its live upstream (keep-alive), relays the reply,
  meters and records it.

Clients run in a third process (aiohttp, one keep-alive session each, as agents' SDKs do)
and time each call from the request to the last byte of the reply. ``gateway CPU per
call`` is the CPU time (all threads) of the gateways' process over the gateway column,
divided by the calls it served: unlike latency, it does not grow with the machine's load.
``alone``: one client; ``x8``: 8 clients at once, each with its own gateway (8 attempts
at once). Calls are Anthropic Messages, streamed (SSE, 7 events) and not.

    PYTHONPATH=. .venv/bin/python bench/gateway_latency.py [--calls 300] [--rounds 3] \
        [--out bench/results/gateway_latency.json]

A report, not a test: prints a table, writes JSON, asserts no times.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import statistics
import sys
import time
from contextlib import ExitStack
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import aiohttp

from recon.agents import FixedScript
from recon.gateway import (
    Credential,
    GatewayConfig,
    LiveUpstream,
    load_prices,
    prices_digest,
    serve_gateway,
    serve_scripted,
)

SCRIPT = FixedScript(["THOUGHT: look at the starter.\n\n```bash\nhead -n 5 brief.md && ls\n```"])
BODY = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "messages": [{"role": "user", "content": "Rebuild the page in brief.md. " * 40}],
}
Target = tuple[str, str]  # base URL, token
WARMUP = 10


def _scripted(conn: Connection) -> None:
    with serve_scripted(SCRIPT) as server:
        conn.send(server.url)
        conn.recv()


async def _client(target: Target, calls: int, stream: bool) -> list[float]:
    url, token = target
    headers = {"x-api-key": token, "anthropic-version": "2023-06-01"}
    body = {**BODY, "stream": stream}
    times = []
    async with aiohttp.ClientSession() as session:
        for i in range(calls + WARMUP):
            start = time.perf_counter()
            async with session.post(f"{url}/v1/messages", json=body, headers=headers) as reply:
                await reply.read()
                assert reply.status == 200, reply.status
            if i >= WARMUP:  # warm-up calls are not timed
                times.append((time.perf_counter() - start) * 1000)
    return times


async def _clients(targets: list[Target], calls: int, stream: bool) -> list[float]:
    runs = await asyncio.gather(*(_client(t, calls, stream) for t in targets))
    return [ms for run in runs for ms in run]


def _measure(conn: Connection) -> None:
    while (job := conn.recv()) is not None:
        targets, calls, stream = job
        conn.send(asyncio.run(_clients(targets, calls, stream)))


def _gateway_config(scripted_url: str) -> GatewayConfig:
    upstream = LiveUpstream(scripted_url, Credential("BENCH_KEY", "bench-not-a-key"))
    return GatewayConfig(upstream=upstream, prices=load_prices(), prices_digest=prices_digest())


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {
        "median_ms": round(statistics.median(ordered), 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 3),
        "calls": len(ordered),
    }


def _run(client: Connection, scripted_url: str, args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    for clients in (1, 8):
        with ExitStack() as stack:
            gateways = [
                stack.enter_context(serve_gateway(_gateway_config(scripted_url), tcp=True))
                for _ in range(clients)
            ]
            through = [(g.url, g.token) for g in gateways]
            direct = [(scripted_url, "")] * clients
            for stream in (False, True):
                times: dict[str, list[float]] = {"direct": [], "gateway": []}
                cpu = 0.0
                for _ in range(args.rounds):
                    for column, targets in (("direct", direct), ("gateway", through)):
                        before = time.process_time()
                        client.send((targets, args.calls, stream))
                        times[column] += client.recv()
                        cpu += time.process_time() - before if column == "gateway" else 0.0
                row: dict[str, Any] = {column: _summary(ms) for column, ms in times.items()}
                # every call a gateway served (warm-ups too) was served by this process
                served = args.rounds * clients * (args.calls + WARMUP)
                row["gateway_cpu_ms_per_call"] = round(cpu * 1000 / served, 3)
                results[f"{'alone' if clients == 1 else 'x8'} {'sse' if stream else 'json'}"] = row
            assert all(g.recording().outcome is None for g in gateways)
    return results


def _table(results: dict[str, Any]) -> str:
    lines = [
        "| case | direct median | gateway median | added median | direct p95 | "
        "gateway p95 | added p95 | gateway CPU per call |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for case, row in results.items():
        d, g = row["direct"], row["gateway"]
        lines.append(
            f"| {case} | {d['median_ms']:.2f} ms | {g['median_ms']:.2f} ms | "
            f"{g['median_ms'] - d['median_ms']:+.2f} ms | {d['p95_ms']:.2f} ms | "
            f"{g['p95_ms']:.2f} ms | {g['p95_ms'] - d['p95_ms']:+.2f} ms | "
            f"{row['gateway_cpu_ms_per_call']:.3f} ms |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per client per round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per column")
    parser.add_argument("--out", type=Path, default=Path("bench/results/gateway_latency.json"))
    args = parser.parse_args()
    context = multiprocessing.get_context("spawn")
    scripted_end, scripted_conn = context.Pipe()
    client_end, client_conn = context.Pipe()
    scripted = context.Process(target=_scripted, args=(scripted_conn,), daemon=True)
    client = context.Process(target=_measure, args=(client_conn,), daemon=True)
    scripted.start()
    client.start()
    try:
        results = _run(client_end, scripted_end.recv(), args)
    finally:
        client_end.send(None)
        scripted_end.send(None)
        client.join(60)
        scripted.join(60)
    print(_table(results))
    report = {
        "bench": "gateway_latency",
        "calls_per_client_per_round": args.calls,
        "rounds": args.rounds,
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_average": os.getloadavg(),
        },
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
