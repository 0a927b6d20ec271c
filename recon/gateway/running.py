"""A running gateway: an event loop in a thread of its own, listening on a unix socket
(what the container reaches) and, optionally, 127.0.0.1 (tests, benches, the native
backend).

``serve_gateway`` is a context manager: the token works while the block runs and is
revoked when it ends; :meth:`RunningGateway.recording` is the attempt's recording so far.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web

from recon.errors import HarnessError
from recon.gateway.attempt import Attempt, GatewayConfig
from recon.gateway.server import app
from recon.model.gateway import GatewayOutcome, Recording

T = TypeVar("T")


@dataclass
class RunningGateway:
    token: str
    socket: Path | None
    port: int | None
    _loop: asyncio.AbstractEventLoop
    _attempt: Attempt

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``, when the gateway listens there."""
        if self.port is None:
            raise HarnessError("gateway: not listening on 127.0.0.1 (start it with tcp=True)")
        return f"http://127.0.0.1:{self.port}"

    def _run(self, read: Callable[[], T]) -> T:
        async def inside() -> T:
            return read()

        return asyncio.run_coroutine_threadsafe(inside(), self._loop).result(timeout=60)

    def recording(self) -> Recording:
        return self._run(self._attempt.recording)

    def outcome(self) -> GatewayOutcome | None:
        return self._run(lambda: self._attempt.outcome)


SHUTDOWN_S = 2.0


def _in(loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, T]) -> T:
    future: Future[T] = asyncio.run_coroutine_threadsafe(work, loop)
    return future.result(timeout=60)


async def _start(
    application: web.Application, socket: Path | None, tcp: bool
) -> tuple[web.AppRunner, int | None]:
    # On stop, a call still in flight (an upstream that never answers, the agent already
    # stopped) is cancelled after SHUTDOWN_S, well inside ``_in``'s 60 s.
    runner = web.AppRunner(
        application, access_log=None, keepalive_timeout=75, shutdown_timeout=SHUTDOWN_S
    )
    await runner.setup()
    if socket is not None:
        await web.UnixSite(runner, str(socket)).start()
    port = None
    if tcp:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, port


class LoopThread:
    """An event loop running in a thread of its own: one per gateway. (Eight gateways
    sharing one loop measured slower than eight loops: ``bench/gateway_latency.py``.)"""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="recon-gateway")
        self._thread.daemon = True
        self._thread.start()

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        return _in(self.loop, work)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


@contextmanager
def serving(
    application: web.Application,
    socket: Path | None,
    tcp: bool,
    closing: Callable[[], Awaitable[None]],
) -> Iterator[tuple[asyncio.AbstractEventLoop, int | None]]:
    """``application`` served from a loop thread of its own until the block ends, then
    ``closing`` run in that loop once the listeners are gone."""
    if socket is None and not tcp:
        raise HarnessError("gateway: give it a unix socket, 127.0.0.1, or both")
    thread = LoopThread()
    try:
        runner, port = thread.run(_start(application, socket, tcp))
    except OSError as err:
        thread.close()
        raise HarnessError(f"gateway: cannot listen ({err.strerror or err})") from err
    try:
        yield thread.loop, port
    finally:
        thread.run(_stop(runner, closing))
        thread.close()


async def _stop(runner: web.AppRunner, closing: Callable[[], Awaitable[None]]) -> None:
    await runner.cleanup()
    await closing()
    left = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in left:  # handlers past the shutdown timeout: never left pending on a closed loop
        task.cancel()
    await asyncio.gather(*left, return_exceptions=True)


@contextmanager
def serve_gateway(
    config: GatewayConfig, socket: Path | None = None, tcp: bool = False
) -> Iterator[RunningGateway]:
    """One attempt's gateway, from its config, until the block ends; its token is revoked
    then, before anything else closes."""
    attempt = Attempt(config)

    async def closing() -> None:
        await config.upstream.close()

    with serving(app(attempt), socket, tcp, closing) as (loop, port):
        try:
            yield RunningGateway(config.token, socket, port, loop, attempt)
        finally:
            attempt.revoked = True  # a plain flag the loop reads: no call passes after this
